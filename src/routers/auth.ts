import { z } from 'zod';
import { userProcedure } from '../middleware/auth.js';
import { tenantProcedure } from '../middleware/tenant.js';
import { router } from '../trpc.js';
import { email, newPassword, OK, okOutput, oneTimeCode, opaqueToken, presentedPassword, sessionOutput, toSession } from './schemas.js';

const tags = ['auth'];

export const authRouter = router({
  signup: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/signup', protect: false, tags, summary: 'Sign up as a Member with email and password',
        description:
          'When the tenant requires email verification, a verification link is mailed and the user is `Pending`: the session ' +
          'is issued but its tokens answer 401 `email_not_verified` until the address is verified (auth/verify-email).',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant', 409: 'Email taken', 429: 'Rate limited' },
      },
    })
    .input(z.object({ email, password: newPassword }))
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const { user, tokens } = await ctx.services.auth.signup(ctx.em, ctx.tenant, input.email, input.password, ctx.meta);
      await ctx.services.emailVerification.sendAfterSignup(ctx.em, ctx.tenant, user);
      return toSession(user, tokens);
    }),

  login: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/login', protect: false, tags,
        summary: 'Sign in with email and password, plus a one-time code when MFA applies',
        description: 'When a second factor is needed and no code is given: 401 with details.reason `mfa_required` and details.methods.',
        errorResponses: { 400: 'Invalid body', 401: 'Invalid credentials or MFA required', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ email, password: presentedPassword, totpCode: oneTimeCode.optional(), emailOtpCode: oneTimeCode.optional() }))
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const { user, tokens } = await ctx.services.auth.login(ctx.em, ctx.tenant, input, ctx.meta);
      return toSession(user, tokens);
    }),

  refresh: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/refresh', protect: false, tags,
        summary: 'Exchange a refresh token for a new pair (rotation; a replayed token revokes its family)',
        errorResponses: { 400: 'Invalid body', 401: 'Invalid, expired, revoked or reused token', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ refreshToken: opaqueToken }))
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const { user, tokens } = await ctx.services.sessions.refresh(ctx.em, ctx.tenant, input.refreshToken, ctx.meta);
      return toSession(user, tokens);
    }),

  logout: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/logout', protect: false, tags, summary: 'End the session of a refresh token',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant' },
      },
    })
    .input(z.object({ refreshToken: opaqueToken }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.em.transactional((tx) => ctx.services.sessions.endByRefreshToken(tx, ctx.tenant, input.refreshToken, ctx.meta));
      return OK;
    }),

  logoutAll: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/logout-all', tags, protect: true, summary: 'End every session of the signed-in user',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant' },
      },
    })
    .output(z.object({ ok: z.literal(true), count: z.number().int() }))
    .mutation(async ({ ctx }) => {
      const count = await ctx.services.accounts.logoutAll(ctx.em, ctx.tenant, ctx.principal.userId, ctx.meta);
      return { ok: true as const, count };
    }),
});
