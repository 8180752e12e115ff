import type { Request, Response } from 'express';
import { SSO_REQUEST_TTL_SECONDS } from '../services/sso/saml-service.js';
import { randomToken } from '../security/tokens.js';
import { readCookie } from './read-cookie.js';

/**
 * The browser binding of an enterprise single sign-on (docs/sso.md "Security checks"): `sso/start`
 * sets a random value in the HttpOnly cookie `sso_binding_{slug}` and stores its SHA-256 with the
 * AuthnRequest; the completion code the assertion consumer service hands out is accepted only with
 * the same cookie, so a SAML response (or its completion code) carried to another browser signs no
 * one in there (login CSRF). SameSite=Lax: the identity provider's form POST to the ACS is cross-site
 * and never needs it; the completion is a same-site call of the hosted page.
 */
const COOKIE_PATH = '/';

function cookieName(tenantSlug: string): string {
  return `sso_binding_${tenantSlug}`;
}

/** A new binding value: 32 random bytes, base64url. */
export function newSsoBinding(): string {
  return randomToken(32);
}

/** Sets the binding value in the cookie for the AuthnRequest's lifetime. */
export function setSsoBindingCookie(req: Request, res: Response, tenantSlug: string, value: string): void {
  res.cookie(cookieName(tenantSlug), value, { httpOnly: true, secure: req.secure, sameSite: 'lax', path: COOKIE_PATH, maxAge: SSO_REQUEST_TTL_SECONDS * 1000 });
}

/** The binding value sent with the request, or undefined. */
export function readSsoBindingCookie(req: Request, tenantSlug: string): string | undefined {
  return readCookie(req, cookieName(tenantSlug));
}

/** Deletes the binding cookie (the completion spent its code). */
export function clearSsoBindingCookie(req: Request, res: Response, tenantSlug: string): void {
  res.clearCookie(cookieName(tenantSlug), { httpOnly: true, secure: req.secure, sameSite: 'lax', path: COOKIE_PATH });
}
