/**
 * OAuth 2.0 scope values (RFC 6749 §3.3): a list of space-delimited, case-sensitive strings, as sent
 * in `scope` and kept in the OpenID Provider's grants (docs/oidc.md).
 */

/**
 * The scope tokens of a `scope` value, in order, empty tokens (doubled spaces) left out.
 * @param scope anything; a non-string (absent parameter, malformed payload) has no tokens.
 * @returns e.g. `['openid', 'email']` for `'openid  email'`; `[]` for undefined.
 */
export function scopeTokens(scope: unknown): string[] {
  return typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [];
}

/**
 * Whether a `scope` value holds the token `wanted` (compared whole and case-sensitively, RFC 6749 §3.3).
 * @param scope anything; a non-string holds nothing.
 */
export function hasScope(scope: unknown, wanted: string): boolean {
  return scopeTokens(scope).includes(wanted);
}
