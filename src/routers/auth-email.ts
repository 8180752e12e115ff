import { z } from 'zod';
import { tenantProcedure } from '../middleware/tenant.js';
import { tenantScopeOf } from '../middleware/request-scope.js';
import { router } from '../trpc.js';
import { email, OK, okOutput, opaqueToken } from './schemas.js';

const accountTags = ['account'];

/** Proving an address: email verification (code or link, and a new link) and the confirmation of an email change (docs/lifecycle.md). */
export const emailAddressRouter = router({
  verifyEmail: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/verify-email', protect: false, tags: accountTags,
        summary: 'Verify the email address with the mailed token; a Pending user becomes Active',
        errorResponses: { 400: 'Invalid body', 401: 'Invalid, used or expired token', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 401: ['invalid_token', 'token_expired'] },
    })
    .input(z.object({ token: opaqueToken }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.emailVerification.verify(tenantScopeOf(ctx), input.token);
      return OK;
    }),

  verifyEmailLink: tenantProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/auth/verify-email', protect: false, tags: accountTags,
        summary: 'The link of the verification mail: same as POST auth/verify-email with the token in the query',
        errorResponses: { 400: 'Missing token', 401: 'Invalid, used or expired token', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 401: ['invalid_token', 'token_expired'] },
    })
    .input(z.object({ token: opaqueToken }))
    .output(okOutput)
    .query(async ({ ctx, input }) => {
      await ctx.services.emailVerification.verify(tenantScopeOf(ctx), input.token);
      return OK;
    }),

  requestEmailVerification: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/request-email-verification', protect: false, tags: accountTags,
        summary: 'Mail a new verification link; answers ok whether or not the account exists',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ email }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      // queued: the worker looks the account up, so the answer takes the same time either way (docs/events.md "Mail")
      await ctx.services.accountMailRequests.enqueue(tenantScopeOf(ctx), 'email_verification', input.email);
      return OK;
    }),

  confirmEmailChange: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/email-change/confirm', protect: false, tags: accountTags,
        summary: 'Confirm a new sign-in email with the token mailed to it (POST me/email); the address changes and is verified',
        description:
          'The old address is mailed a notice. Open verification and password-reset links and the email code of the account end; ' +
          'its sessions stay. 409 `email_taken` when another user of the workspace took the address meanwhile (the token stays unused).',
        errorResponses: {
          400: 'Invalid body', 401: 'Invalid, used, expired or another workspace\'s token', 404: 'Unknown tenant',
          409: 'Another user of the workspace has the address now', 429: 'Rate limited',
        },
      },
      errorReasons: { 401: ['invalid_token', 'token_expired'], 409: ['email_taken'] },
    })
    .input(z.object({ token: opaqueToken }))
    .output(okOutput.extend({ email: z.string().meta({ description: 'The account\'s sign-in email now' }) }))
    .mutation(async ({ ctx, input }) => {
      const { newEmail } = await ctx.services.emailChange.confirm(tenantScopeOf(ctx), input.token);
      return { ok: true as const, email: newEmail };
    }),
});
