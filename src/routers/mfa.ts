import { z } from 'zod';
import { userProcedure } from '../middleware/auth.js';
import { router } from '../trpc.js';
import { OK, okOutput, oneTimeCode, totpEnrollmentOutput } from './schemas.js';

const tags = ['mfa'];

/** TOTP enrollment of the signed-in user (SPEC.md part 4 "MFA (authenticated user)"); user tokens only. */
export const mfaRouter = router({
  totpEnroll: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/totp/enroll', tags, protect: true,
        summary: 'Start TOTP enrollment: a new secret and its otpauth URI (active after mfa/totp/verify)',
        errorResponses: { 401: 'Not signed in', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant', 409: 'TOTP already enrolled' },
      },
      errorReasons: { 401: ['user_token_required'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled'] },
    })
    .output(totpEnrollmentOutput)
    .mutation(async ({ ctx }) => {
      const user = await ctx.services.accounts.getUser(ctx.em, ctx.tenant.id, ctx.principal.userId);
      return ctx.services.totp.startEnrollment(ctx.em, ctx.tenant, user);
    }),

  totpVerify: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/totp/verify', tags, protect: true,
        summary: 'Activate the pending TOTP secret with a code from the authenticator app',
        errorResponses: {
          400: 'Invalid body', 401: 'Not signed in or wrong code', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant',
          409: 'TOTP already enrolled, or enrollment not started',
        },
      },
      errorReasons: { 401: ['user_token_required', 'invalid_mfa_code'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled', 'totp_enrollment_not_started', 'totp_enrollment_changed'] },
    })
    .input(z.object({ code: oneTimeCode }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.services.accounts.getUser(ctx.em, ctx.tenant.id, ctx.principal.userId);
      await ctx.services.totp.confirmEnrollment(ctx.em, ctx.tenant, user, input.code, ctx.actor, ctx.meta);
      return OK;
    }),
});
