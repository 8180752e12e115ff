/**
 * Every `details.reason` the second-factor routes give (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const MFA_REASONS = {
  /** The password was right; a second factor is needed (`details.methods`). */
  mfaRequired: 'mfa_required',
  /** The TOTP, email or recovery code is wrong, spent or expired. */
  invalidMfaCode: 'invalid_mfa_code',
  /** The tenant's MFA policy is `Disabled`. */
  mfaDisabled: 'mfa_disabled',
  /** TOTP is already active. */
  totpAlreadyEnrolled: 'totp_already_enrolled',
  /** Verify was called without an enrolment in progress. */
  totpEnrollmentNotStarted: 'totp_enrollment_not_started',
  /** Another enrolment replaced the one being verified. */
  totpEnrollmentChanged: 'totp_enrollment_changed',
  /** The action needs TOTP enrolled (recovery codes). */
  totpNotEnrolled: 'totp_not_enrolled',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    mfa: typeof MFA_REASONS;
  }
}
