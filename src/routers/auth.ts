import { z } from 'zod';
import { userProcedure } from '../middleware/auth.js';
import { withAccountBudget } from '../middleware/rate-limit.js';
import { tenantProcedure, tenantSlugProcedure } from '../middleware/tenant.js';
import { router } from '../trpc.js';
import { PASSKEY_REASONS } from '../services/passkeys/passkey-errors.js';
import { authenticationOptionsOutput, authenticationResponseInput } from './passkey-schemas.js';
import { SESSION_REASONS } from '../services/sessions/session-errors.js';
import { readIdempotencyKey, refreshRequestHeaders } from './idempotency-key.js';
import { deliverSession } from './session-delivery.js';
import {
  documentAtLeastOneOf, documentOneOf, email, newPassword, OK, okOutput, oneTimeCode, opaqueToken, presentedPassword, recoveryCodeInput, recoveryCodesOutput, sessionOutput, toSession,
  totpEnrollmentOutput,
} from './schemas.js';

const tags = ['auth'];
const accountTags = ['account'];

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

/** Every `/v1/{tenantSlug}/auth/*` procedure: sign-up, sign-in, sessions, second-factor sign-in steps, email verification and password reset. */
export const authRouter = router({
  signup: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/signup', protect: false, tags, summary: 'Sign up as a Member with email and password',
        description:
          'When the tenant requires email verification, a verification link is mailed and the user is `Pending`: the session ' +
          'is issued but its tokens answer 401 `email_not_verified` until the address is verified (auth/verify-email).',
        errorResponses: {
          400: 'Invalid body, or a password the workspace\'s policy refuses', 403: 'The workspace\'s sign-up policy refuses this address (`signup_disabled`, `signup_domain_not_allowed`)',
          404: 'Unknown tenant', 409: 'Email taken', 429: 'Rate limited',
        },
      },
      errorReasons: { 400: ['password_too_short', 'password_too_common'], 403: ['signup_disabled', 'signup_domain_not_allowed'], 409: ['email_taken'] },
    })
    .input(z.object({ email, password: newPassword }))
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const { user, tokens } = await ctx.services.auth.signup(ctx.em, ctx.tenant, input.email, input.password, ctx.meta);
      await ctx.services.emailVerification.sendAfterSignup(ctx.em, ctx.tenant, user);
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),

  login: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/login', protect: false, tags,
        summary: 'Sign in with email and password, plus a one-time code when MFA applies',
        description:
          'When a second factor is needed and no code is given: 401 with details.reason `mfa_required` and details.methods. ' +
          'Where details.methods has `totp`, a single-use `recoveryCode` is accepted in place of `totpCode` (docs/mfa.md "Recovery codes").',
        errorResponses: { 400: 'Invalid body', 401: 'Invalid credentials or MFA required', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 401: ['invalid_credentials', 'user_suspended', 'email_not_verified', 'mfa_required', 'invalid_mfa_code'] },
    })
    .input(
      z.object({
        email, password: presentedPassword, totpCode: oneTimeCode.optional(), emailOtpCode: oneTimeCode.optional(), recoveryCode: recoveryCodeInput.optional(),
      }),
    )
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const { user, tokens } = await ctx.services.auth.login(ctx.em, ctx.tenant, input, ctx.meta);
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),

  refresh: tenantSlugProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/refresh', protect: false, tags,
        summary: 'Exchange a refresh token for a new pair (rotation; a replayed token revokes its family)',
        description:
          'Send an `Idempotency-Key` (one per logical refresh, the same on every retry of it): a retry whose answer was lost ' +
          'gets the same pair again within 60 s, while that pair is unused, instead of revoking the session as a replay.',
        requestHeaders: refreshRequestHeaders,
        errorResponses: {
          400: 'Invalid body or Idempotency-Key', 401: 'Invalid, expired, revoked or reused token', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: {
        400: [SESSION_REASONS.invalidIdempotencyKey],
        401: ['invalid_token', 'refresh_token_reused', 'refresh_token_expired', 'session_revoked', 'email_not_verified'],
      },
    })
    .input(z.object({ refreshToken: opaqueToken }))
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const idempotencyKey = readIdempotencyKey(ctx.req);
      const { user, tokens } = await ctx.services.sessions.refresh(ctx.em, input.tenantSlug, input.refreshToken, ctx.meta, idempotencyKey);
      return deliverSession(ctx, input.tenantSlug, toSession(user, tokens), tokens.sessionId);
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
      await ctx.services.sessions.endByRefreshToken(ctx.em, ctx.tenant, input.refreshToken, ctx.meta);
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
      if (input.password === undefined) await ctx.services.accountMailRequests.enqueue(ctx.em, 'email_otp', ctx.tenant, input.email, ctx.meta);
      else await ctx.services.mfaSignIn.requestEmailOtp(ctx.em, ctx.tenant, input.email, input.password, ctx.meta);
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
      ctx.services.mfaSignIn.totpInitialEnroll(ctx.em, ctx.tenant, input.email, input.password, input.emailOtpCode, ctx.meta),
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
        ctx.em, ctx.tenant, input.email, input.password, code, input.emailOtpCode, ctx.meta,
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
      const complete = () => ctx.services.mfaChallenges.complete(ctx.em, ctx.tenant, input.mfaToken, input, ctx.meta);
      const email = await ctx.services.mfaChallenges.accountEmailOf(ctx.em, ctx.tenant, input.mfaToken);
      const { user, tokens } = email ? await withAccountBudget(ctx, ctx.tenant, email, complete) : await complete();
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),

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
      await ctx.services.emailVerification.verify(ctx.em, ctx.tenant, input.token, ctx.meta);
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
      await ctx.services.emailVerification.verify(ctx.em, ctx.tenant, input.token, ctx.meta);
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
      await ctx.services.accountMailRequests.enqueue(ctx.em, 'email_verification', ctx.tenant, input.email, ctx.meta);
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
      const { newEmail } = await ctx.services.emailChange.confirm(ctx.em, ctx.tenant, input.token, ctx.meta);
      return { ok: true as const, email: newEmail };
    }),

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
      await ctx.services.accountMailRequests.enqueue(ctx.em, 'password_reset', ctx.tenant, input.email, ctx.meta);
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
      const sessionsEnded = await ctx.services.passwordReset.complete(ctx.em, ctx.tenant, input.token, input.newPassword, ctx.meta);
      return { ok: true as const, sessionsEnded };
    }),

  passkeyOptions: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/passkey/options', protect: false, tags,
        summary: 'Start a passkey sign-in: WebAuthn request options and a challengeId',
        description:
          'Without `email` (discoverable credential) `allowCredentials` is empty. With `email` it lists that user\'s passkeys; ' +
          'an unknown email gets a stand-in of the same shape. The challenge is single-use and valid 5 minutes.',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(z.object({ email: email.optional() }))
    .output(authenticationOptionsOutput)
    .mutation(({ ctx, input }) => ctx.services.passkeys.signInOptions(ctx.em, ctx.tenant, input.email)),

  passkeyVerify: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/passkey/verify', protect: false, tags,
        summary: 'Sign in with a passkey: the authenticator\'s response to auth/passkey/options',
        description:
          '`response` is the `AuthenticationResponseJSON` (as @simplewebauthn/browser\'s startAuthentication answers it). User ' +
          'verification is required, so a passkey satisfies every MFA policy by itself. A signature counter that did not go up ' +
          'is refused (`passkey_counter_regressed`, audited `PasskeyCloneSuspected`). Failures count against the account\'s login budget.',
        errorResponses: {
          400: 'Invalid body', 401: 'Unknown, spent or expired challenge, a response that does not verify, or the account cannot sign in',
          404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: {
        401: [PASSKEY_REASONS.challengeInvalid, PASSKEY_REASONS.invalid, PASSKEY_REASONS.counterRegressed, 'user_suspended', 'email_not_verified'],
      },
    })
    .input(z.object({ challengeId: z.uuid(), response: authenticationResponseInput }))
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const signIn = () => ctx.services.passkeys.signIn(ctx.em, ctx.tenant, input.challengeId, input.response, ctx.meta);
      const account = await ctx.services.passkeys.accountEmailOf(ctx.em, ctx.tenant, input.response.id);
      const { user, tokens } = account ? await withAccountBudget(ctx, ctx.tenant, account, signIn) : await signIn();
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),
});
