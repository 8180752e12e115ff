import { z } from 'zod';
import { tenantProcedure } from '../middleware/tenant.js';
import { tenantScopeOf } from '../middleware/request-scope.js';
import { router } from '../trpc.js';
import { deliverSession } from './session-delivery.js';
import { email, newPassword, oneTimeCode, presentedPassword, recoveryCodeInput, sessionOutput, toSession } from './schemas.js';

const tags = ['auth'];

/** Sign-up and sign-in with a password: `auth/signup`, `auth/login` (docs/api-rules.md "Users and sign-up"). */
export const passwordSignInRouter = router({
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
      const { user, tokens } = await ctx.services.auth.signup(tenantScopeOf(ctx), input.email, input.password);
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
      const { user, tokens } = await ctx.services.auth.login(tenantScopeOf(ctx), input);
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),
});
