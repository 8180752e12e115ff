import { z } from 'zod';
import { userProcedure } from '../middleware/auth.js';
import { router } from '../trpc.js';
import { OK, okOutput, oneTimeCode, totpEnrollmentOutput } from './schemas.js';

const tags = ['mfa'];

/** TOTP enrollment of the signed-in user (docs/mfa.md); user tokens only. */
export const mfaRouter = router({
  totpEnroll: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/totp/enroll', tags, protect: true,
        summary: 'Start TOTP enrollment: a new secret and its otpauth URI (active after mfa/totp/verify)',
        description:
          'Needs a recent sign-in: the session was authenticated (password, provider or factor) less than 10 minutes ago; ' +
          'refreshing does not renew that. Otherwise 401 `reauthentication_required`: sign in again.',
        errorResponses: { 401: 'Not signed in, or `reauthentication_required`', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant', 409: 'TOTP already enrolled' },
      },
      errorReasons: { 401: ['user_token_required', 'reauthentication_required'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled'] },
    })
    .output(totpEnrollmentOutput)
    .mutation(({ ctx }) => ctx.services.mfaEnrollment.start(ctx.em, ctx.tenant, ctx.principal)),

  totpVerify: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/mfa/totp/verify', tags, protect: true,
        summary: 'Activate the pending TOTP secret with a code from the authenticator app',
        description:
          'Needs a recent sign-in like mfa/totp/enroll (else 401 `reauthentication_required`). The user is mailed a notice of the new factor.',
        errorResponses: {
          400: 'Invalid body', 401: 'Not signed in, wrong code, or `reauthentication_required`', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant',
          409: 'TOTP already enrolled, or enrollment not started',
        },
      },
      errorReasons: { 401: ['user_token_required', 'reauthentication_required', 'invalid_mfa_code'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled', 'totp_enrollment_not_started', 'totp_enrollment_changed'] },
    })
    .input(z.object({ code: oneTimeCode }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.mfaEnrollment.confirm(ctx.em, ctx.tenant, ctx.principal, input.code, ctx.actor, ctx.meta);
      return OK;
    }),
});
