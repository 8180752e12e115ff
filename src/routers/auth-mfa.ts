import { z } from 'zod';
import { tenantProcedure } from '../middleware/tenant.js';
import { router } from '../trpc.js';
import { email, OK, okOutput, oneTimeCode, presentedPassword, sessionOutput, toSession, totpEnrollmentOutput } from './schemas.js';

const tags = ['auth'];

/** The auth.* procedures of MFA (SPEC.md part 4), merged into the `auth` router. */
export const authMfaRouter = router({
  requestEmailOtp: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/request-email-otp', protect: false, tags,
        summary: 'Mail a 6-digit sign-in code (valid 10 minutes, single use) for the email factor',
        description:
          'Accepts `email` alone or with `password`. Answers `ok` whether or not the account exists; a code is sent only ' +
          'when the tenant policy uses the email factor for that user. A new request replaces the previous code.',
        errorResponses: {
          400: 'Invalid body', 401: 'Wrong password (when one is given)', 404: 'Unknown tenant', 429: 'Rate limited',
          503: 'The mail could not be sent',
        },
      },
    })
    .input(z.object({ email, password: presentedPassword.optional() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.mfaSignIn.requestEmailOtp(ctx.em, ctx.tenant, input.email, input.password, ctx.meta);
      return OK;
    }),

  totpInitialEnroll: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/totp/initial-enroll', protect: false, tags,
        summary: 'Step 1 of TOTP enrollment for a user without a factor: a new secret and its otpauth URI',
        errorResponses: {
          400: 'Invalid body', 401: 'Invalid credentials', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant',
          409: 'TOTP already enrolled', 429: 'Rate limited',
        },
      },
    })
    .input(z.object({ email, password: presentedPassword }))
    .output(totpEnrollmentOutput)
    .mutation(({ ctx, input }) => ctx.services.mfaSignIn.totpInitialEnroll(ctx.em, ctx.tenant, input.email, input.password, ctx.meta)),

  totpInitialVerify: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/totp/initial-verify', protect: false, tags,
        summary: 'Step 2 of TOTP enrollment: activate the factor with a code and sign in',
        description: 'The code field is `code`; `totpCode` is accepted as an alias. Exactly one of them is required.',
        errorResponses: {
          400: 'Invalid body', 401: 'Invalid credentials or code', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant',
          409: 'TOTP already enrolled, or enrollment not started', 429: 'Rate limited',
        },
      },
    })
    .input(
      z
        .object({ email, password: presentedPassword, code: oneTimeCode.optional(), totpCode: oneTimeCode.optional() })
        .refine((body) => (body.code === undefined) !== (body.totpCode === undefined), {
          message: 'exactly one of code or totpCode is required',
          path: ['code'],
        }),
    )
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const code = (input.code ?? input.totpCode)!;
      const { user, tokens } = await ctx.services.mfaSignIn.totpInitialVerify(ctx.em, ctx.tenant, input.email, input.password, code, ctx.meta);
      return toSession(user, tokens);
    }),
});
