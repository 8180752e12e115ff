import type { z } from 'zod';
import { setRefreshCookie, wantsRefreshCookie } from '../middleware/refresh-cookie.js';
import type { RequestContext } from '../context.js';
import type { sessionOutput } from './schemas.js';

type Session = z.infer<typeof sessionOutput>;

/**
 * Hands a new session to the caller. For the hosted pages (the `/trpc` endpoint with the cookie
 * transport header) the refresh token goes into the workspace's HttpOnly cookie and is left out of
 * the body; every other caller gets it in the body, as documented in the OpenAPI document.
 */
export function deliverSession<S extends Session>(ctx: Pick<RequestContext, 'req' | 'res'>, tenantSlug: string, session: S): S {
  if (!wantsRefreshCookie(ctx.req) || session.refreshToken === undefined) return session;
  setRefreshCookie(ctx.req, ctx.res, tenantSlug, session.refreshToken, session.refreshTokenExpiresIn);
  const { refreshToken: _kept, ...rest } = session;
  return rest as S;
}
