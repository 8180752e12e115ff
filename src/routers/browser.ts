import { tenantProcedure, tenantSlugProcedure } from '../middleware/tenant.js';
import { z } from 'zod';
import { clearIdpBindingCookie, readIdpBindingCookie, setIdpBindingCookie } from '../middleware/idp-binding-cookie.js';
import { clearSsoBindingCookie, readSsoBindingCookie } from '../middleware/sso-binding-cookie.js';
import { clearRefreshCookie, clearSessionBindingCookie, readRefreshCookie, wantsRefreshCookie } from '../middleware/refresh-cookie.js';
import { tenantScopeOf } from '../middleware/request-scope.js';
import { router } from '../trpc.js';
import { callbackInput } from './idp.js';
import { OK, okOutput, sessionOutput, toSession } from './schemas.js';
import { readIdempotencyKey } from './idempotency-key.js';
import { deliverSession } from './session-delivery.js';
import { SESSION_ERRORS } from '../services/sessions/session-errors.js';

/**
 * The hosted pages' session procedures, on the `/trpc` endpoint only (no REST route): the same
 * rotation and sign-out as `auth.refresh` / `auth.logout`, with the refresh token read from the
 * workspace's HttpOnly cookie instead of the body (docs/decisions.md "Web front end").
 */
/**
 * Every browser procedure needs the cookie transport header (a cross-site form cannot send it, and
 * without it a session would be answered with its refresh token in the body).
 * @throws ApiError 400 `cookie_transport_required`.
 */
function requireCookieTransport(req: Parameters<typeof wantsRefreshCookie>[0]): void {
  if (!wantsRefreshCookie(req)) {
    throw SESSION_ERRORS.cookieTransportRequired();
  }
}

export const browserRouter = router({
  /**
   * Rotates the cookie's refresh token: a new access token in the body, the new refresh token only in
   * the cookie (never in the body, which page scripts can read). Takes the same optional
   * `Idempotency-Key` header as auth.refresh (a retry gets the same pair again).
   * @throws ApiError 400 `cookie_transport_required` without the header; 401 `refresh_cookie_missing`
   *   without a cookie; the errors of auth.refresh otherwise (a failed refresh also deletes the cookie).
   */
  refresh: tenantSlugProcedure
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      requireCookieTransport(ctx.req);
      const presented = readRefreshCookie(ctx.req, input.tenantSlug);
      if (!presented) throw SESSION_ERRORS.refreshCookieMissing();
      const idempotencyKey = readIdempotencyKey(ctx.req);
      try {
        const { user, tokens } = await ctx.services.sessions.refresh(ctx.em, input.tenantSlug, presented, ctx.meta, idempotencyKey);
        return deliverSession(ctx, input.tenantSlug, toSession(user, tokens), tokens.sessionId);
      } catch (err) {
        clearRefreshCookie(ctx.req, ctx.res, input.tenantSlug);
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
      requireCookieTransport(ctx.req);
      const binding = setIdpBindingCookie(ctx.req, ctx.res, ctx.tenant.slug);
      return { authorizationUrl: await ctx.services.idp.start(ctx.em, ctx.tenant, binding) };
    }),

  /**
   * Completes a provider sign-in from the page `/app/{slug}/idp-callback` with the parameters the
   * provider sent (a POST, so the code never lands in a /trpc URL). Same answers as oauth/idp/callback,
   * including 401 `mfa_required` and 401 `browser_mismatch` (also for a flow not started by
   * `browser.idpStart`, which no browser is bound to: login CSRF); a session's refresh token goes into the
   * refresh cookie. The binding cookie is deleted whatever the outcome.
   */
  idpCallback: tenantProcedure
    .input(callbackInput)
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      requireCookieTransport(ctx.req);
      const { tenantSlug: _slug, ...params } = input;
      const binding = readIdpBindingCookie(ctx.req, ctx.tenant.slug);
      clearIdpBindingCookie(ctx.req, ctx.res, ctx.tenant.slug);
      const { user, tokens } = await ctx.services.idp.callback(tenantScopeOf(ctx), params, binding, true);
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),

  /**
   * Completes an enterprise single sign-on from the page `/app/{slug}/sso-callback` with the
   * completion code the assertion consumer service put in the fragment (docs/sso.md): accepted only
   * with the `sso_binding_{slug}` cookie of the browser that started it (401 `browser_mismatch`),
   * once, within 2 minutes (401 `sso_completion_invalid`). Answers the session (refresh token in the
   * cookie) and the `returnTo` path given to `sso/start`; 401 `mfa_required` as a provider sign-in.
   * The binding cookie is deleted whatever the outcome.
   */
  ssoComplete: tenantProcedure
    .input(z.object({ code: z.string().min(1).max(256) }))
    .output(sessionOutput.extend({ returnTo: z.string().nullable() }))
    .mutation(async ({ ctx, input }) => {
      requireCookieTransport(ctx.req);
      const binding = readSsoBindingCookie(ctx.req, ctx.tenant.slug);
      clearSsoBindingCookie(ctx.req, ctx.res, ctx.tenant.slug);
      const { user, tokens, returnTo } = await ctx.services.ssoSignIn.complete(tenantScopeOf(ctx), input.code, binding);
      return { ...deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId), returnTo };
    }),

  /**
   * Ends the cookie's session (if any) and deletes the cookie; `{ok:true}`.
   * @throws ApiError 400 `cookie_transport_required` without the header (nothing ended).
   */
  logout: tenantProcedure
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      requireCookieTransport(ctx.req);
      const presented = readRefreshCookie(ctx.req, ctx.tenant.slug);
      if (presented) await ctx.services.sessions.endByRefreshToken(tenantScopeOf(ctx), presented);
      clearRefreshCookie(ctx.req, ctx.res, ctx.tenant.slug);
      clearSessionBindingCookie(ctx.req, ctx.res, ctx.tenant.slug);
      return OK;
    }),
});
