import { z } from 'zod';
import { withAccountBudget } from '../middleware/rate-limit.js';
import { tenantProcedure } from '../middleware/tenant.js';
import { tenantScopeOf } from '../middleware/request-scope.js';
import { router } from '../trpc.js';
import { deliverSession } from './session-delivery.js';
import {
  documentAtLeastOneOf, documentOneOf, email, OK, okOutput, oneTimeCode, opaqueToken, presentedPassword, recoveryCodeInput, recoveryCodesOutput, sessionOutput, toSession, totpEnrollmentOutput,
} from './schemas.js';

const tags = ['auth'];
/** auth/totp/initial-verify: the code is `code` or its alias `totpCode`, exactly one of them. */
const initialVerifyBody = z.object({
  email,
  password: presentedPassword,
  code: oneTimeCode.optional(),
  totpCode: oneTimeCode.optional(),
  emailOtpCode: oneTimeCode.optional(),
});
const initialVerifyForms = {
  'With code': z.object({ email, password: presentedPassword, code: oneTimeCode, emailOtpCode: oneTimeCode.optional() }),
  'With totpCode (alias of code)': z.object({ email, password: presentedPassword, totpCode: oneTimeCode, emailOtpCode: oneTimeCode.optional() }),
};
/** auth/mfa/complete: the token with at least one code (a TOTP, an email one-time or a recovery code). */
const mfaCompleteBody = z.object({
  mfaToken: opaqueToken,
  totpCode: oneTimeCode.optional(),
  emailOtpCode: oneTimeCode.optional(),
  recoveryCode: recoveryCodeInput.optional(),
});

/** The second-factor steps of a sign-in: the email one-time code, the TOTP enrolment a `Required` policy asks for, and `auth/mfa/complete` (docs/mfa.md). */
export const secondFactorSignInRouter = router({
  requestEmailOtp: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/request-email-otp', protect: false, tags,
        summary: 'Mail a 6-digit sign-in code (valid 10 minutes, single use) for the email factor',
        description:
          'Accepts `email` alone or with `password`. Answers `ok` whether or not the account exists; a code is sent only ' +
          'when the tenant policy uses the email factor for that user. A new request replaces the previous code. ' +
          'The mail is sent by the job queue after the answer, with retries.',
        errorResponses: {
          400: 'Invalid body', 401: 'Wrong password (when one is given)', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: { 401: ['invalid_credentials', 'user_suspended', 'email_not_verified'] },
    })
    .input(z.object({ email, password: presentedPassword.optional() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      // Without a password the answer must not depend on the account: the look-up runs in the job queue.
      if (input.password === undefined) await ctx.services.accountMailRequests.enqueue(tenantScopeOf(ctx), 'email_otp', input.email);
      else await ctx.services.mfaSignIn.requestEmailOtp(tenantScopeOf(ctx), input.email, input.password);
      return OK;
    }),

  totpInitialEnroll: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/totp/initial-enroll', protect: false, tags,
        summary: 'Step 1 of TOTP enrollment for a user without a factor: a new secret and its otpauth URI',
        description:
          'Under mfaPolicy `Required` the password alone never enrols a factor: `emailOtpCode` (from auth/request-email-otp) ' +
          'is needed too, else 401 `mfa_required` with details.methods `["email"]`; the same code also serves initial-verify.',
        errorResponses: {
          400: 'Invalid body', 401: 'Invalid credentials, `mfa_required` or `invalid_mfa_code`', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant',
          409: 'TOTP already enrolled', 429: 'Rate limited',
        },
      },
      errorReasons: { 401: ['invalid_credentials', 'user_suspended', 'email_not_verified', 'mfa_required', 'invalid_mfa_code'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled'] },
    })
    .input(z.object({ email, password: presentedPassword, emailOtpCode: oneTimeCode.optional() }))
    .output(totpEnrollmentOutput)
    .mutation(({ ctx, input }) =>
      ctx.services.mfaSignIn.totpInitialEnroll(tenantScopeOf(ctx), input.email, input.password, input.emailOtpCode),
    ),

  totpInitialVerify: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/totp/initial-verify', protect: false, tags,
        summary: 'Step 2 of TOTP enrollment: activate the factor with a code and sign in',
        description:
          'The code field is `code`; `totpCode` is accepted as an alias. Exactly one of them is required. Under mfaPolicy ' +
          '`Required` the `emailOtpCode` given to initial-enroll is needed again (401 `mfa_required` without it). The answer ' +
          'carries the ten recovery codes of the new factor (`recoveryCodes`), shown only here (docs/mfa.md "Recovery codes").',
        errorResponses: {
          400: 'Invalid body', 401: 'Invalid credentials or code, or `mfa_required`', 403: 'MFA disabled for the tenant', 404: 'Unknown tenant',
          409: 'TOTP already enrolled, or enrollment not started', 429: 'Rate limited',
        },
      },
      errorReasons: { 401: ['invalid_credentials', 'user_suspended', 'email_not_verified', 'mfa_required', 'invalid_mfa_code'], 403: ['mfa_disabled'], 409: ['totp_already_enrolled', 'totp_enrollment_not_started', 'totp_enrollment_changed'] },
    })
    .input(
      initialVerifyBody
        .refine((body) => (body.code === undefined) !== (body.totpCode === undefined), {
          message: 'exactly one of code or totpCode is required',
          path: ['code'],
        })
        .meta({ override: documentOneOf(initialVerifyForms) }),
    )
    .output(sessionOutput.extend({ recoveryCodes: recoveryCodesOutput }))
    .mutation(async ({ ctx, input }) => {
      const code = (input.code ?? input.totpCode)!;
      const { user, tokens, recoveryCodes } = await ctx.services.mfaSignIn.totpInitialVerify(
        tenantScopeOf(ctx), input.email, input.password, code, input.emailOtpCode,
      );
      return deliverSession(ctx, ctx.tenant.slug, { ...toSession(user, tokens), recoveryCodes }, tokens.sessionId);
    }),

  mfaComplete: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/mfa/complete', protect: false, tags,
        summary: 'Complete a sign-in that answered `mfa_required` with an mfaToken, with a TOTP or email code',
        description:
          'A provider sign-in (oauth/idp/callback) under an MFA policy answers 401 `mfa_required` with details.methods and a ' +
          'single-use details.mfaToken valid 5 minutes, unless the provider reported multi-factor authentication (`amr`). ' +
          'Send the token with `totpCode` or a single-use `recoveryCode` (methods `["totp"]`) or `emailOtpCode` (methods `["email"]`, ' +
          'from auth/request-email-otp). ' +
          'Five wrong codes spend the token; wrong codes also count against the account\'s login budget.',
        errorResponses: {
          400: 'Invalid body',
          401: 'The token is unknown, spent or expired, the code is wrong, or the account is suspended',
          404: 'Unknown tenant',
          429: 'Rate limited',
        },
      },
      errorReasons: { 401: ['invalid_token', 'token_expired', 'invalid_mfa_code', 'user_suspended'] },
    })
    .input(
      mfaCompleteBody
        .refine((body) => body.totpCode !== undefined || body.emailOtpCode !== undefined || body.recoveryCode !== undefined, {
          message: 'one of totpCode, emailOtpCode or recoveryCode is required',
          path: ['totpCode'],
        })
        .meta({ override: documentAtLeastOneOf(mfaCompleteBody, ['totpCode', 'emailOtpCode', 'recoveryCode']) }),
    )
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const complete = () => ctx.services.mfaChallenges.complete(tenantScopeOf(ctx), input.mfaToken, input);
      const email = await ctx.services.mfaChallenges.accountEmailOf(ctx.em, ctx.tenant, input.mfaToken);
      const { user, tokens } = email ? await withAccountBudget(ctx, ctx.tenant, email, complete) : await complete();
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),
});
