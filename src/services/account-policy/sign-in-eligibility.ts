import type { UserStatus } from '../../entities/user.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';

/**
 * The one rule of who may hold a session, whatever the method (password, passkey, provider, an
 * access token on each request): a `Suspended` account never, a `Pending` one (address not yet
 * verified where the tenant requires it) not until the link is used (docs/lifecycle.md).
 */

/**
 * Refuses a suspended account.
 * @throws ApiError 401 `user_suspended`.
 */
export function refuseSuspended(status: UserStatus): void {
  if (status === 'Suspended') throw SIGN_IN_ERRORS.userSuspended();
}

/**
 * Refuses an account that may not start or keep a session.
 * @throws ApiError 401 `user_suspended`, `email_not_verified`.
 */
export function assertMaySignIn(status: UserStatus): void {
  refuseSuspended(status);
  if (status === 'Pending') throw SIGN_IN_ERRORS.emailNotVerified();
}
