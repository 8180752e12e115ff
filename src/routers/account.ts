import { z } from 'zod';
import { tenantProcedure } from '../middleware/tenant.js';
import { router } from '../trpc.js';
import { email, newPassword, OK, okOutput, opaqueToken } from './schemas.js';

const tags = ['account'];

/** Email verification and password reset (mailed single-use tokens); no bearer token needed. */
export const accountRouter = router({
  verifyEmail: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/verify-email', protect: false, tags,
        summary: 'Verify the email address with the mailed token; a Pending user becomes Active',
        errorResponses: { 400: 'Invalid body', 401: 'Invalid, used or expired token', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ token: opaqueToken }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.emailVerification.verify(ctx.em, ctx.tenant, input.token, ctx.meta);
      return OK;
    }),

  verifyEmailLink: tenantProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/auth/verify-email', protect: false, tags,
        summary: 'The link of the verification mail: same as POST auth/verify-email with the token in the query',
        errorResponses: { 400: 'Missing token', 401: 'Invalid, used or expired token', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ token: opaqueToken }))
    .output(okOutput)
    .query(async ({ ctx, input }) => {
      await ctx.services.emailVerification.verify(ctx.em, ctx.tenant, input.token, ctx.meta);
      return OK;
    }),

  requestEmailVerification: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/request-email-verification', protect: false, tags,
        summary: 'Mail a new verification link; answers ok whether or not the account exists',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ email }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.emailVerification.request(ctx.em, ctx.tenant, input.email);
      return OK;
    }),

  requestPasswordReset: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/password-reset/request', protect: false, tags,
        summary: 'Mail a single-use password-reset token (valid 1 hour); answers ok whether or not the account exists',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ email }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.passwordReset.request(ctx.em, ctx.tenant, input.email);
      return OK;
    }),

  completePasswordReset: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/password-reset/complete', protect: false, tags,
        summary: 'Set a new password with the mailed token; every session of the user ends',
        errorResponses: { 400: 'Invalid body', 401: 'Invalid, used or expired token', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ token: opaqueToken, newPassword }))
    .output(z.object({ ok: z.literal(true), sessionsEnded: z.number().int() }))
    .mutation(async ({ ctx, input }) => {
      const sessionsEnded = await ctx.services.passwordReset.complete(ctx.em, ctx.tenant, input.token, input.newPassword, ctx.meta);
      return { ok: true as const, sessionsEnded };
    }),
});
