import { parse as parseCookieHeader } from 'cookie';
import type { Request, Response } from 'express';

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
  const header = req.headers.cookie;
  if (!header) return undefined;
  const value = parseCookieHeader(header)[cookieName(tenantSlug)];
  return value === undefined || value === '' ? undefined : value;
}

/** Deletes the workspace's refresh cookie. */
export function clearRefreshCookie(req: Request, res: Response, tenantSlug: string): void {
  res.clearCookie(cookieName(tenantSlug), { httpOnly: true, secure: req.secure, sameSite: 'strict', path: COOKIE_PATH });
}
