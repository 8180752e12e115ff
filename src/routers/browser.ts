import { ApiError } from '../lib/errors.js';
import { tenantProcedure } from '../middleware/tenant.js';
import { clearRefreshCookie, readRefreshCookie } from '../rest/refresh-cookie.js';
import { router } from '../trpc.js';
import { OK, okOutput, sessionOutput, toSession } from './schemas.js';
import { deliverSession } from './session-delivery.js';

/**
 * The hosted pages' session procedures, on the `/trpc` endpoint only (no REST route): the same
 * rotation and sign-out as `auth.refresh` / `auth.logout`, with the refresh token read from the
 * workspace's HttpOnly cookie instead of the body (docs/decisions.md "issue 13").
 */
export const browserRouter = router({
  /**
   * Rotates the cookie's refresh token: a new access token in the body, the new refresh token in the cookie.
   * @throws ApiError 401 `refresh_cookie_missing` without a cookie; the errors of auth.refresh otherwise
   *   (a failed refresh also deletes the cookie).
   */
  refresh: tenantProcedure
    .output(sessionOutput)
    .mutation(async ({ ctx }) => {
      const presented = readRefreshCookie(ctx.req, ctx.tenant.slug);
      if (!presented) throw new ApiError('UNAUTHORIZED', 'Not signed in', { reason: 'refresh_cookie_missing' });
      try {
        const { user, tokens } = await ctx.services.sessions.refresh(ctx.em, ctx.tenant, presented, ctx.meta);
        return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens));
      } catch (err) {
        clearRefreshCookie(ctx.req, ctx.res, ctx.tenant.slug);
        throw err;
      }
    }),

  /** Ends the cookie's session (if any) and deletes the cookie; always `{ok:true}`. */
  logout: tenantProcedure
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      const presented = readRefreshCookie(ctx.req, ctx.tenant.slug);
      if (presented) await ctx.em.transactional((tx) => ctx.services.sessions.endByRefreshToken(tx, ctx.tenant, presented, ctx.meta));
      clearRefreshCookie(ctx.req, ctx.res, ctx.tenant.slug);
      return OK;
    }),
});
