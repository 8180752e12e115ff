/**
 * Every `details.reason` the OpenID-provider routes of the API give (docs/oidc.md "Errors"): the
 * applications routes and the completion of a sign-in started by an application. The protocol
 * endpoints themselves answer OAuth 2.0 errors (`error`, `error_description`, RFC 6749 §5.2).
 */
export const OIDC_REASONS = {
  /** A redirect URI is not an absolute https URL, loopback http URL, or (native only) private-use scheme URL. */
  invalidRedirectUri: 'invalid_redirect_uri',
  /** The application type has no client secret (`spa`, `native`). */
  noClientSecret: 'application_has_no_secret',
  /** The sign-in the page tries to finish is unknown, expired, or of another browser. */
  interactionNotFound: 'interaction_not_found',
  /** The application asked for a new sign-in (`prompt=login`, `max_age`): the session is older. */
  freshSignInRequired: 'fresh_sign_in_required',
  /**
   * Finishing a sign-in needs proof of the hosted session beyond its access token: the browser's
   * session-binding cookie or the session's current refresh token (docs/oidc.md "Sessions end everywhere").
   */
  sessionProofRequired: 'session_proof_required',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    oidc: typeof OIDC_REASONS;
  }
}
