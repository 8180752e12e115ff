import { badRequest, conflict, notFound, unauthorized, type ApiError } from '../../lib/errors.js';

/**
 * Every `details.reason` the passkey routes give of their own (docs/passkeys.md "Errors"); the
 * routers list them in their `errorReasons` from here.
 */
export const PASSKEY_REASONS = {
  /** The ceremony's challenge is unknown, already used, expired, or of another tenant or user. */
  challengeInvalid: 'passkey_challenge_invalid',
  /** The response did not verify (signature, origin, RP id, user verification, unknown credential). */
  invalid: 'invalid_passkey',
  /** The signature counter did not go up: a cloned authenticator is suspected. */
  counterRegressed: 'passkey_counter_regressed',
  /** The credential is already registered in this tenant. */
  alreadyRegistered: 'passkey_already_registered',
  /** No passkey of the signed-in user has this id. */
  notFound: 'passkey_not_found',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    passkeys: typeof PASSKEY_REASONS;
  }
}

/** Constructors of the errors above; the HTTP status follows the route (docs/passkeys.md). */
export const passkeyErrors = {
  /** 400 during registration (the caller is signed in), 401 at sign-in. */
  challengeInvalid: (atSignIn: boolean): ApiError =>
    (atSignIn ? unauthorized : badRequest)(PASSKEY_REASONS.challengeInvalid, 'The passkey challenge is unknown, used or expired; start again'),
  invalid: (atSignIn: boolean): ApiError =>
    (atSignIn ? unauthorized : badRequest)(PASSKEY_REASONS.invalid, 'The passkey response could not be verified'),
  counterRegressed: (): ApiError =>
    unauthorized(PASSKEY_REASONS.counterRegressed, 'The passkey signature counter went back; the authenticator may have been cloned'),
  alreadyRegistered: (): ApiError => conflict(PASSKEY_REASONS.alreadyRegistered, 'This passkey is already registered'),
  notFound: (): ApiError => notFound('No such passkey', PASSKEY_REASONS.notFound),
};
