import { z } from 'zod';
import { tenantProcedure } from '../middleware/tenant.js';
import { tenantScopeOf } from '../middleware/request-scope.js';
import { router } from '../trpc.js';
import { email, newPassword, OK, okOutput, opaqueToken } from './schemas.js';

const accountTags = ['account'];

/** Password reset: the existence-blind request and the completion with the mailed token (docs/lifecycle.md). */
export const passwordResetRouter = router({
  requestPasswordReset: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/password-reset/request', protect: false, tags: accountTags,
        summary: 'Mail a single-use password-reset token (valid 1 hour); answers ok whether or not the account exists',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ email }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.accountMailRequests.enqueue(tenantScopeOf(ctx), 'password_reset', input.email);
      return OK;
    }),

  completePasswordReset: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/password-reset/complete', protect: false, tags: accountTags,
        summary: 'Set a new password with the mailed token; every session of the user ends',
        errorResponses: {
          400: 'Invalid body, or a password the workspace\'s policy refuses', 401: 'Invalid, used or expired token', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['password_too_short', 'password_too_common'], 401: ['invalid_token', 'token_expired'] },
    })
    .input(z.object({ token: opaqueToken, newPassword }))
    .output(z.object({ ok: z.literal(true), sessionsEnded: z.number().int() }))
    .mutation(async ({ ctx, input }) => {
      const sessionsEnded = await ctx.services.passwordReset.complete(tenantScopeOf(ctx), input.token, input.newPassword);
      return { ok: true as const, sessionsEnded };
    }),
});
