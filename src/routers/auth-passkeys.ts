import { z } from 'zod';
import { withAccountBudget } from '../middleware/rate-limit.js';
import { tenantProcedure } from '../middleware/tenant.js';
import { tenantScopeOf } from '../middleware/request-scope.js';
import { router } from '../trpc.js';
import { PASSKEY_REASONS } from '../services/passkeys/passkey-errors.js';
import { authenticationOptionsOutput, authenticationResponseInput } from './passkey-schemas.js';
import { deliverSession } from './session-delivery.js';
import { email, sessionOutput, toSession } from './schemas.js';

const tags = ['auth'];

/** Sign-in with a passkey: the assertion options and their verification (docs/passkeys.md). */
export const passkeySignInRouter = router({
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
      const signIn = () => ctx.services.passkeys.signIn(tenantScopeOf(ctx), input.challengeId, input.response);
      const account = await ctx.services.passkeys.accountEmailOf(ctx.em, ctx.tenant, input.response.id);
      const { user, tokens } = account ? await withAccountBudget(ctx, ctx.tenant, account, signIn) : await signIn();
      return deliverSession(ctx, ctx.tenant.slug, toSession(user, tokens), tokens.sessionId);
    }),
});
