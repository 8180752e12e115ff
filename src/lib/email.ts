import { z } from 'zod';

/** Canonical form of an email address for storage and comparison: trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The one email rule of the service (docs/api-rules.md "Limits"): request schemas, the documented
 * response schema (`format: email` plus this `pattern`) and the services use it. Zod's own email
 * rule (no leading dot, no `..`, a top-level domain of letters) narrowed to RFC 5321 §4.5.3.1.1
 * (local part at most 64 octets) and RFC 1035 §2.3.1 host names (labels of at most 63 characters
 * that neither start nor end with a hyphen), so it also satisfies JSON Schema's `format: email`.
 * At most 254 characters in all (RFC 5321 path limit).
 */
export const EMAIL_PATTERN =
  /^(?=[^@]{1,64}@)(?!\.)(?!.*\.\.)[A-Za-z0-9_'+\-.]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** {@link EMAIL_PATTERN} as a Zod schema, at most 254 characters. */
export const emailAddress = z.email({ pattern: EMAIL_PATTERN, error: 'must be a valid email address' }).max(254);
