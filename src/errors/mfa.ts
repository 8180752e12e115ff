import { defineErrorCatalog, reasonsOf } from '../lib/errors.js';

/** A second factor a user may present (`details.methods` of `mfa_required`). */
type MfaMethods = { methods: readonly string[] };

/**
 * Every error the second-factor routes give (docs/api-rules.md "Errors"): each entry declares once
 * its code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`); entries sharing a
 * reason give it in another context.
 */
export const MFA_ERRORS = defineErrorCatalog({
  /** The password was right; a second factor is needed (`details.methods`). */
  mfaRequired: {
    code: 'UNAUTHORIZED', reason: 'mfa_required', message: 'A second factor is required',
    details: ({ methods }: MfaMethods) => ({ methods }),
  },
  /** A provider sign-in needs a second factor: finish it at auth/mfa/complete with `details.mfaToken`. */
  mfaRequiredAfterProvider: {
    code: 'UNAUTHORIZED', reason: 'mfa_required', message: 'A second factor is required; complete the sign-in at auth/mfa/complete',
    details: (challenge: MfaMethods & { mfaToken: string; expiresInSeconds: number }) => ({
      methods: challenge.methods, mfaToken: challenge.mfaToken, expiresInSeconds: challenge.expiresInSeconds,
    }),
  },
  /** Enrolling a first factor under a policy that requires one needs the emailed code as well. */
  emailCodeRequiredToEnroll: {
    code: 'UNAUTHORIZED', reason: 'mfa_required', message: 'Enrolling a factor under this policy needs the emailed code too',
    details: () => ({ methods: ['email'] }),
  },
  /** The TOTP, email or recovery code is wrong, spent or expired. */
  invalidMfaCode: { code: 'UNAUTHORIZED', reason: 'invalid_mfa_code', message: 'The one-time code is not valid' },
  /** A wrong code at the MFA step of a sign-in, which may be retried with `details.methods`. */
  invalidMfaCodeRetry: {
    code: 'UNAUTHORIZED', reason: 'invalid_mfa_code', message: 'The one-time code is not valid',
    details: ({ methods }: MfaMethods) => ({ methods }),
  },
  /** The tenant's MFA policy is `Disabled`. */
  mfaDisabled: { code: 'FORBIDDEN', reason: 'mfa_disabled', message: 'Second factors are disabled for this tenant' },
  /** TOTP is already active. */
  totpAlreadyEnrolled: { code: 'CONFLICT', reason: 'totp_already_enrolled', message: 'TOTP is already enrolled for this user' },
  /** Verify was called without an enrolment in progress. */
  totpEnrollmentNotStarted: { code: 'CONFLICT', reason: 'totp_enrollment_not_started', message: 'Start TOTP enrollment before verifying a code' },
  /** Another enrolment replaced the one being verified. */
  totpEnrollmentChanged: { code: 'CONFLICT', reason: 'totp_enrollment_changed', message: 'The TOTP enrollment changed meanwhile; start again' },
  /** The action needs TOTP enrolled (recovery codes). */
  totpNotEnrolled: { code: 'CONFLICT', reason: 'totp_not_enrolled', message: 'Recovery codes need an active authenticator app (TOTP)' },
});

/** The `details.reason` of each entry of MFA_ERRORS, by entry name (for routers' `errorReasons`). */
export const MFA_REASONS = reasonsOf(MFA_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    mfa: typeof MFA_REASONS;
  }
}
