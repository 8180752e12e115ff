import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ApiError } from '../../lib/errors.js';
import { asSystem, type TenantScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import { randomToken, sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { setSsoCompletion } from '../../queries/sso-auth-request.js';

/**
 * The hand-over between a connection's verified answer (SAML ACS, OpenID Connect callback) and the
 * browser that started the sign-in (docs/sso.md "Sign-in"): the verified identity, kept encrypted
 * behind a single-use completion code.
 */

/** Seconds the browser has to bring the completion code back after the answer was verified. */
export const SSO_COMPLETION_TTL_SECONDS = 120;

/** The person an identity provider vouched for, as kept between the verified answer and the browser's completion. */
export const verifiedSsoIdentity = z.object({
  /** The SAML entity id or the OpenID issuer. */
  issuer: z.string(),
  /** SAML: the NameID (for a transient NameID, the email); OpenID Connect: `sub`. Stable per person at that provider. */
  subject: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  /** SAML: the AuthnContextClassRef; OpenID Connect: the `amr` values, space-separated; null when none. */
  authnContext: z.string().nullable(),
  /** SAML: every attribute of the AttributeStatement; OpenID Connect: `amr`. Strings, bounded. */
  attributes: z.record(z.string(), z.array(z.string())),
  /** True when the answer itself shows multi-factor authentication at the provider (OpenID Connect `amr`, RFC 8176). */
  providerMfa: z.boolean().default(false),
});
export type VerifiedSsoIdentity = z.infer<typeof verifiedSsoIdentity>;

/** Associated data binding an encrypted identity to its tenant and request. */
export function ssoIdentityAssociatedData(tenantId: string, requestId: string): string {
  return `sso-identity:${tenantId}:${requestId}`;
}

/**
 * The verified identity of a spent completion, decrypted.
 * @throws Error when the ciphertext does not decrypt under the tenant and request (tampered rows).
 */
export function readSsoIdentity(keyring: Keyring, tenantId: string, spent: { id: string; identityEnc: string | null }): VerifiedSsoIdentity {
  if (spent.identityEnc === null) throw new Error('the SSO request holds no identity');
  return verifiedSsoIdentity.parse(JSON.parse(keyring.decrypt(spent.identityEnc, ssoIdentityAssociatedData(tenantId, spent.id))));
}

/**
 * Stores the verified identity of an answered request (keyring ciphertext) and a new completion code
 * (only its SHA-256), valid {@link SSO_COMPLETION_TTL_SECONDS}.
 * @returns the completion code for the browser.
 */
export async function issueCompletion(
  em: EntityManager, keyring: Keyring, tenantId: string, requestRowId: string, identity: VerifiedSsoIdentity, now: Date,
): Promise<string> {
  const code = randomToken(32);
  await setSsoCompletion(em, tenantId, requestRowId, {
    completionHash: sha256Hex(code),
    identityEnc: keyring.encrypt(JSON.stringify(identity), ssoIdentityAssociatedData(tenantId, requestRowId)),
    completionExpiresAt: new Date(now.getTime() + SSO_COMPLETION_TTL_SECONDS * 1000),
  });
  return code;
}

/**
 * Audits a refused answer of a connection (`UserLoginFailed`, `method: sso`, its reason and message)
 * in the scope's workspace, with its metadata and the `system` actor (nobody is identified); other
 * errors are not refusals.
 */
export async function auditRefusal(audit: AuditService, scope: TenantScope, connectionId: string, err: unknown): Promise<void> {
  if (!(err instanceof ApiError)) return;
  await audit.record(asSystem(scope), {
    action: 'UserLoginFailed', target: { type: 'sso_connection', id: connectionId },
    details: { method: 'sso', reason: err.details.reason, connectionId, message: err.message },
  });
}
