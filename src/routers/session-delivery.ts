import type { z } from 'zod';
import { setRefreshCookie, setSessionBindingCookie, wantsRefreshCookie } from '../middleware/refresh-cookie.js';
import type { RequestContext } from '../context.js';
import { sessionBinding } from '../security/session-binding.js';
import type { sessionOutput } from './schemas.js';

type Session = z.infer<typeof sessionOutput>;

/**
 * Hands a new session to the caller. For the hosted pages (the `/trpc` endpoint with the cookie
 * transport header) the refresh token goes into the workspace's HttpOnly cookie and is left out of
 * the body, and the session's binding goes into the cookie the provider's sign-in hand-off needs
 * (docs/oidc.md "Sessions end everywhere"); every other caller gets it in the body, as documented in
 * the OpenAPI document.
 * @param sessionId the session the tokens belong to (`IssuedTokens.sessionId`), for the binding cookie.
 */
export function deliverSession<S extends Session>(
  ctx: Pick<RequestContext, 'req' | 'res' | 'services'>, tenantSlug: string, session: S, sessionId: string,
): S {
  if (!wantsRefreshCookie(ctx.req) || session.refreshToken === undefined) return session;
  setRefreshCookie(ctx.req, ctx.res, tenantSlug, session.refreshToken, session.refreshTokenExpiresIn);
  setSessionBindingCookie(ctx.req, ctx.res, tenantSlug, sessionBinding(ctx.services.config.jwtSecret, tenantSlug, sessionId), session.refreshTokenExpiresIn);
  const { refreshToken: _kept, ...rest } = session;
  return rest as S;
}
