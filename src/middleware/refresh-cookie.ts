import type { Request, Response } from 'express';
import { readCookie } from './read-cookie.js';

/**
 * The browser's refresh-token transport (docs/decisions.md "Web front end"): the hosted pages under `/app`
 * never see the refresh token; the `/trpc` endpoint keeps it in an HttpOnly, SameSite=Strict cookie
 * scoped to the path `/trpc`, one cookie per workspace. REST clients are unaffected: they always get
 * the token in the JSON body.
 */

/** Request header by which the hosted pages ask for the cookie transport (value `cookie`). */
export const REFRESH_TRANSPORT_HEADER = 'x-refresh-transport';

/** The only path the cookie is sent to: the tRPC endpoint of the same origin. */
const COOKIE_PATH = '/trpc';

/** Cookie name for a workspace; slugs are `[a-z0-9-]`, valid cookie-name characters. */
function cookieName(tenantSlug: string): string {
  return `refresh_${tenantSlug}`;
}

/** True when the request came through `/trpc` and asked for the cookie transport. */
export function wantsRefreshCookie(req: Request): boolean {
  return req.baseUrl === COOKIE_PATH && req.get(REFRESH_TRANSPORT_HEADER) === 'cookie';
}

/**
 * Stores a refresh token in the workspace's HttpOnly cookie.
 * @param maxAgeSeconds lifetime of the refresh token, in seconds.
 */
export function setRefreshCookie(req: Request, res: Response, tenantSlug: string, refreshToken: string, maxAgeSeconds: number): void {
  res.cookie(cookieName(tenantSlug), refreshToken, {
    httpOnly: true,
    secure: req.secure,
    sameSite: 'strict',
    path: COOKIE_PATH,
    maxAge: maxAgeSeconds * 1000,
  });
}

/** The workspace's refresh token from the cookie, or undefined. */
export function readRefreshCookie(req: Request, tenantSlug: string): string | undefined {
  return readCookie(req, cookieName(tenantSlug));
}

/** Deletes the workspace's refresh cookie. */
export function clearRefreshCookie(req: Request, res: Response, tenantSlug: string): void {
  res.clearCookie(cookieName(tenantSlug), { httpOnly: true, secure: req.secure, sameSite: 'strict', path: COOKIE_PATH });
}

/** The session-binding cookie of a workspace (security/session-binding.ts). */
function bindingCookieName(tenantSlug: string): string {
  return `session_binding_${tenantSlug}`;
}

/** The only path the binding cookie is sent to: the workspace provider's interaction hand-off. */
function bindingCookiePath(tenantSlug: string): string {
  return `/v1/${encodeURIComponent(tenantSlug)}/oidc/interaction`;
}

/**
 * Stores the binding of the hosted session in an HttpOnly, SameSite=Strict cookie scoped to the
 * workspace provider's interaction path, beside the refresh cookie (docs/oidc.md "Sessions end everywhere").
 * @param maxAgeSeconds lifetime of the session's refresh token, in seconds.
 */
export function setSessionBindingCookie(req: Request, res: Response, tenantSlug: string, binding: string, maxAgeSeconds: number): void {
  res.cookie(bindingCookieName(tenantSlug), binding, {
    httpOnly: true, secure: req.secure, sameSite: 'strict', path: bindingCookiePath(tenantSlug), maxAge: maxAgeSeconds * 1000,
  });
}

/** The workspace's session binding from the cookie, or undefined. */
export function readSessionBindingCookie(req: Request, tenantSlug: string): string | undefined {
  return readCookie(req, bindingCookieName(tenantSlug));
}

/** Deletes the workspace's session-binding cookie. */
export function clearSessionBindingCookie(req: Request, res: Response, tenantSlug: string): void {
  res.clearCookie(bindingCookieName(tenantSlug), { httpOnly: true, secure: req.secure, sameSite: 'strict', path: bindingCookiePath(tenantSlug) });
}
