/*
 * Workspace slugs, shared by the service (tenant creation) and the pages ("Open a workspace" turns a
 * typed name into its slug the same way).
 */

/** Longest tenant slug (a DNS label). */
export const SLUG_MAX_LENGTH = 63;

/**
 * What a tenant name must contain for a slug to be made from it: a letter a–z or a digit, or a
 * Latin-1 letter whose accent comes off (`É` → `e`; not `Æ`, `Ø`, `ß`, `Þ`, `Ð`). The same pattern is
 * the request schema's, so the document and the service agree (JSON Schema `pattern`, unanchored).
 */
export const TENANT_NAME_PATTERN = /[A-Za-z0-9\u00C0-\u00C5\u00C7-\u00CF\u00D1-\u00D6\u00D9-\u00DD\u00E0-\u00E5\u00E7-\u00EF\u00F1-\u00F6\u00F9-\u00FD\u00FF]/;

/**
 * Derives a tenant slug from its name (docs/api-rules.md "Resources"): accents removed (Unicode
 * NFKD, combining marks dropped), lower-cased, runs of characters outside `[a-z0-9]` become `-`,
 * leading and trailing `-` trimmed, at most 63 characters.
 * @returns the slug, empty when the name does not match {@link TENANT_NAME_PATTERN}.
 */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/-+$/g, '');
}
