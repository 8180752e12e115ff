import { ApiError } from '../lib/errors.js';
import { tenantProcedure } from '../middleware/tenant.js';
import { z } from 'zod';
import { clearIdpBindingCookie, readIdpBindingCookie, setIdpBindingCookie } from '../rest/idp-binding-cookie.js';
import { clearRefreshCookie, readRefreshCookie, wantsRefreshCookie } from '../rest/refresh-cookie.js';
import { router } from '../trpc.js';
import { callbackInput } from './idp.js';
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

  /**
   * Starts a provider sign-in bound to this browser (docs/web.md "Sign-in with the identity provider"):
   * sets the HttpOnly SameSite=Lax `idp_binding_{slug}` cookie (10 minutes) and stores its SHA-256 with
   * the authorization request. Needs the cookie transport header.
   * @returns `{ authorizationUrl }` to navigate to.
   * @throws ApiError 400 `cookie_transport_required` without the header; 400 `idp_not_configured`,
   *   400 `idp_unavailable` as oauth/idp/start.
   */
  idpStart: tenantProcedure
    .output(z.object({ authorizationUrl: z.url() }))
    .mutation(async ({ ctx }) => {
      if (!wantsRefreshCookie(ctx.req)) {
        throw new ApiError('BAD_REQUEST', 'Send x-refresh-transport: cookie', { reason: 'cookie_transport_required' });
      }
      const binding = setIdpBindingCookie(ctx.req, ctx.res, ctx.tenant.slug);
      return { authorizationUrl: await ctx.services.idp.start(ctx.em, ctx.tenant, binding) };
    }),

  /**
   * Completes a provider sign-in from the page `/app/{slug}/idp-callback` with the parameters the
   * provider sent (a POST, so the code never lands in a /trpc URL). Same answers as oauth/idp/callback,
   * including 401 `mfa_required` and 401 `browser_mismatch`; a session's refresh token goes into the
   * refresh cookie. The binding cookie is deleted whatever the outcome.
   */
  idpCallback: tenantProcedure
    .input(callbackInput)
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, ...params } = input;
      const binding = readIdpBindingCookie(ctx.req, ctx.tenant.slug);
      clearIdpBindingCookie(ctx.req, ctx.res, ctx.tenant.slug);
      const { user, tokens } = await ctx.services.idp.callback(ctx.em, ctx.tenant, params, ctx.meta, binding);
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens));
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
