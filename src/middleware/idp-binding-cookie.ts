import type { NextFunction, Request, Response } from 'express';
import { IDP_AUTH_REQUEST_TTL_SECONDS } from '../services/idp/idp-service.js';
import { randomToken } from '../security/tokens.js';
import { readCookie } from './read-cookie.js';

/**
 * The browser binding of a provider sign-in started from the hosted pages (docs/web.md "Sign-in with
 * the identity provider", docs/decisions.md "Web front end"). `browser.idpStart` sets a random value in the
 * HttpOnly cookie `idp_binding_{slug}` and stores its SHA-256 with the authorization request; the
 * callback accepts that request only with the same cookie, so a state (and code) carried to another
 * browser is refused. SameSite=Lax because the provider sends the browser back with a top-level GET
 * from its own site; path `/` because the cookie must reach both the registered redirect URI
 * (`/v1/{slug}/oauth/idp/callback`) and `/trpc`.
 */
const COOKIE_PATH = '/';

/** Workspace slugs: the characters of tenant slugs, so the name and the page path need no escaping. */
const SLUG = /^[a-z0-9-]{1,100}$/;

/** The authorization-response parameters the page receives (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207). */
const CALLBACK_PARAMS = ['code', 'state', 'error', 'error_description', 'iss'] as const;

function cookieName(tenantSlug: string): string {
  return `idp_binding_${tenantSlug}`;
}

/**
 * Creates a binding value (32 random bytes, base64url), sets it in the cookie for
 * {@link IDP_AUTH_REQUEST_TTL_SECONDS} seconds, and returns it for the authorization request.
 */
export function setIdpBindingCookie(req: Request, res: Response, tenantSlug: string): string {
  const value = randomToken(32);
  res.cookie(cookieName(tenantSlug), value, {
    httpOnly: true,
    secure: req.secure,
    sameSite: 'lax',
    path: COOKIE_PATH,
    maxAge: IDP_AUTH_REQUEST_TTL_SECONDS * 1000,
  });
  return value;
}

/** The binding value sent with the request, or undefined. */
export function readIdpBindingCookie(req: Request, tenantSlug: string): string | undefined {
  return readCookie(req, cookieName(tenantSlug));
}

/** Deletes the binding cookie (after a callback spent the request). */
export function clearIdpBindingCookie(req: Request, res: Response, tenantSlug: string): void {
  res.clearCookie(cookieName(tenantSlug), { httpOnly: true, secure: req.secure, sameSite: 'lax', path: COOKIE_PATH });
}

/**
 * `GET /v1/{slug}/oauth/idp/callback` reached by a browser that holds the workspace's binding cookie
 * (a flow the hosted pages started): answers 303 to `/app/{slug}/idp-callback#code=…&state=…` so that the
 * page completes the sign-in over `/trpc` with the cookie transports. The parameters go into the fragment,
 * which browsers never send to a server or in a Referer. Every other request (API clients) goes on to
 * the REST procedure unchanged.
 */
export function idpCallbackToPage(req: Request, res: Response, next: NextFunction): void {
  const slug = req.params.slug;
  if (req.method !== 'GET' || typeof slug !== 'string' || !SLUG.test(slug) || !readIdpBindingCookie(req, slug)) return next();
  const query = new URLSearchParams(req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '');
  const fragment = new URLSearchParams();
  for (const name of CALLBACK_PARAMS) {
    const value = query.get(name);
    if (value !== null) fragment.set(name, value);
  }
  res.redirect(303, `/app/${slug}/idp-callback#${fragment.toString()}`);
}
