/**
 * Every `details.reason` a sign-in or sign-up gives (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const SIGN_IN_REASONS = {
  /** Unknown email or wrong password (one text for both). */
  invalidCredentials: 'invalid_credentials',
  /** The account is suspended. */
  userSuspended: 'user_suspended',
  /** The tenant requires a verified address and this one is not yet. */
  emailNotVerified: 'email_not_verified',
  /** The address already belongs to a user of the tenant. */
  emailTaken: 'email_taken',
  /** The workspace's sign-up policy is `InviteOnly`. */
  signupDisabled: 'signup_disabled',
  /** The workspace's sign-up policy is `Domains` and the address is of another domain. */
  signupDomainNotAllowed: 'signup_domain_not_allowed',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    signIn: typeof SIGN_IN_REASONS;
  }
}
