import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The binding of a hosted-page session to the browser that holds it (docs/oidc.md "Sessions end
 * everywhere"): an HMAC-SHA256 of the workspace slug and session id under a key derived (HKDF) from
 * `JWT_SECRET`, kept in an HttpOnly cookie scoped to the provider's interaction path. Completing an
 * OpenID Provider sign-in needs it (or the session's current refresh token), so an access token
 * alone, stolen from a page or a log, never starts a provider session.
 * @returns the base64url binding value (43 characters).
 */
export function sessionBinding(secret: Buffer, tenantSlug: string, sessionId: string): string {
  const key = Buffer.from(hkdfSync('sha256', secret, 'hosted-session-binding', tenantSlug, 32));
  return createHmac('sha256', key).update(sessionId).digest('base64url');
}

/** Whether `presented` is the binding of that session, compared in constant time. */
export function isSessionBinding(secret: Buffer, tenantSlug: string, sessionId: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const expected = Buffer.from(sessionBinding(secret, tenantSlug, sessionId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
