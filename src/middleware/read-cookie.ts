import { parse as parseCookieHeader } from 'cookie';
import type { Request } from 'express';

/**
 * The value of the cookie `name` the request carries (RFC 6265 `Cookie` header, parsed by `cookie`),
 * or undefined when it is absent or empty: an empty value never counts as a credential.
 */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  const value = parseCookieHeader(header)[name];
  return value === undefined || value === '' ? undefined : value;
}
