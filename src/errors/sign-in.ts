import { defineErrorCatalog, reasonsOf } from '../lib/errors.js';

/**
 * Every error a sign-in or sign-up gives (docs/api-rules.md "Errors"): each entry declares once its
 * code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`); entries sharing a
 * reason give it in another context.
 */
export const SIGN_IN_ERRORS = defineErrorCatalog({
  /** Unknown email or wrong password (one text for both). */
  invalidCredentials: { code: 'UNAUTHORIZED', reason: 'invalid_credentials', message: 'Invalid email or password' },
  /** A signed-in user's current password, asked again before a sensitive change, is wrong. */
  wrongCurrentPassword: { code: 'UNAUTHORIZED', reason: 'invalid_credentials', message: 'The current password is not correct' },
  /** The account is suspended. */
  userSuspended: { code: 'UNAUTHORIZED', reason: 'user_suspended', message: 'The account is suspended' },
  /** The tenant requires a verified address and this one is not yet. */
  emailNotVerified: { code: 'UNAUTHORIZED', reason: 'email_not_verified', message: 'The email address is not verified yet' },
  /** An admin tried to activate a `Pending` user: verifying the address is what activates it. */
  activatedByVerification: { code: 'CONFLICT', reason: 'email_not_verified', message: 'This user becomes active by verifying their email address' },
  /** The address already belongs to a user of the tenant (sign-up, invite, user creation). */
  emailTaken: { code: 'CONFLICT', reason: 'email_taken', message: 'A user with this email already exists in the workspace' },
  /** A deleted user being restored has an address a live user of the tenant took meanwhile. */
  emailTakenSinceDeletion: { code: 'CONFLICT', reason: 'email_taken', message: 'A live user of the workspace has this email address now' },
  /** An email change to an address another account of the tenant has. */
  emailTakenByAnotherAccount: { code: 'CONFLICT', reason: 'email_taken', message: 'Another account of this workspace has this email address' },
  /** The workspace's sign-up policy is `InviteOnly`. */
  signupDisabled: { code: 'FORBIDDEN', reason: 'signup_disabled', message: 'This workspace is invite-only: ask an admin for an invite' },
  /** The workspace's sign-up policy is `Domains` and the address is of another domain. */
  signupDomainNotAllowed: { code: 'FORBIDDEN', reason: 'signup_domain_not_allowed', message: 'Sign-up in this workspace is open to some email domains only' },
});

/** The `details.reason` of each entry of SIGN_IN_ERRORS, by entry name (for routers' `errorReasons`). */
export const SIGN_IN_REASONS = reasonsOf(SIGN_IN_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    signIn: typeof SIGN_IN_REASONS;
  }
}
