import { mergeRouters } from '../trpc.js';
import { emailAddressRouter } from './auth-email.js';
import { passkeySignInRouter } from './auth-passkeys.js';
import { passwordResetRouter } from './auth-password-reset.js';
import { passwordSignInRouter } from './auth-password.js';
import { secondFactorSignInRouter } from './auth-second-factor.js';
import { sessionRouter } from './auth-sessions.js';

/**
 * Every `/v1/{tenantSlug}/auth/*` procedure, one router per sign-in method or step, merged under
 * `auth` (the paths, the procedure names `auth.*` and so their rate limits are those of one router):
 * password sign-up and sign-in, sessions, second-factor steps, email verification, password reset,
 * passkeys. The order is the OpenAPI document's.
 */
export const authRouter = mergeRouters(
  passwordSignInRouter, sessionRouter, secondFactorSignInRouter, emailAddressRouter, passwordResetRouter, passkeySignInRouter,
);
