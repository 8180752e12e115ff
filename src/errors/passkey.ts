import { defineErrorCatalog, reasonsOf } from '../lib/errors.js';

/**
 * Every error the passkey routes give of their own (docs/passkeys.md "Errors"): each entry declares
 * once its code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`). A ceremony
 * failure is 400 during registration (the caller is signed in) and 401 at sign-in.
 */
export const PASSKEY_ERRORS = defineErrorCatalog({
  /** The registration challenge is unknown, already used, expired, or of another tenant or user. */
  challengeInvalid: { code: 'BAD_REQUEST', reason: 'passkey_challenge_invalid', message: 'The passkey challenge is unknown, used or expired; start again' },
  /** The sign-in challenge is unknown, already used or expired. */
  signInChallengeInvalid: {
    code: 'UNAUTHORIZED', reason: 'passkey_challenge_invalid', message: 'The passkey challenge is unknown, used or expired; start again',
  },
  /** The registration response did not verify (signature, origin, RP id, user verification). */
  invalid: { code: 'BAD_REQUEST', reason: 'invalid_passkey', message: 'The passkey response could not be verified' },
  /** The sign-in response did not verify (signature, origin, RP id, user verification, unknown credential). */
  signInInvalid: { code: 'UNAUTHORIZED', reason: 'invalid_passkey', message: 'The passkey response could not be verified' },
  /** The signature counter did not go up: a cloned authenticator is suspected. */
  counterRegressed: {
    code: 'UNAUTHORIZED', reason: 'passkey_counter_regressed', message: 'The passkey signature counter went back; the authenticator may have been cloned',
  },
  /** The credential is already registered in this tenant. */
  alreadyRegistered: { code: 'CONFLICT', reason: 'passkey_already_registered', message: 'This passkey is already registered' },
  /** No passkey of the signed-in user has this id. */
  passkeyNotFound: { code: 'NOT_FOUND', reason: 'passkey_not_found', message: 'No such passkey' },
});

/** The `details.reason` of each entry of PASSKEY_ERRORS, by entry name (for routers' `errorReasons`). */
export const PASSKEY_REASONS = reasonsOf(PASSKEY_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    passkeys: typeof PASSKEY_REASONS;
  }
}
