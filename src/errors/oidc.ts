import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error the OpenID-provider routes of the API give (docs/oidc.md "Errors"): the applications
 * routes and the completion of a sign-in started by an application. Each entry declares once its
 * code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`). The protocol endpoints
 * themselves answer OAuth 2.0 errors (`error`, `error_description`, RFC 6749 §5.2).
 */
export const OIDC_ERRORS = defineErrorCatalog({
  /** A redirect URI is not an absolute https URL, loopback http URL, or (native only) private-use scheme URL (`problem`: why). */
  invalidRedirectUri: {
    code: 'BAD_REQUEST', reason: 'invalid_redirect_uri',
    message: ({ uri, problem }: { uri: string; problem: string }) => `Redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}`,
  },
  /** The application type has no client secret (`spa`, `native`). */
  noClientSecret: { code: 'CONFLICT', reason: 'application_has_no_secret', message: 'This application type is public and has no client secret' },
  /** The sign-in the page tries to finish is unknown, expired, or of another browser. */
  interactionNotFound: {
    code: 'UNAUTHORIZED', reason: 'interaction_not_found', message: 'This sign-in request is unknown or has expired; start again from the application',
  },
  /** The sign-in the page tries to finish was started for another account. */
  interactionOfAnotherAccount: { code: 'UNAUTHORIZED', reason: 'interaction_not_found', message: 'This sign-in belongs to another account' },
  /** The application asked for a new sign-in (`prompt=login`, `max_age`): the session is older. */
  freshSignInRequired: { code: 'UNAUTHORIZED', reason: 'fresh_sign_in_required', message: 'The application asked for a new sign-in' },
  /**
   * Finishing a sign-in needs proof of the hosted session beyond its access token: the browser's
   * session-binding cookie or the session's current refresh token (docs/oidc.md "Sessions end everywhere").
   */
  sessionProofRequired: { code: 'UNAUTHORIZED', reason: 'session_proof_required', message: 'Sign in again on this device to continue to the application' },
  /** A sign-in was finished with an organization, but the application did not ask for scope `organizations`. */
  organizationsNotRequested: {
    code: 'BAD_REQUEST', reason: 'organizations_not_requested', message: 'The application did not ask for an organization',
  },
  /** The organization picked is not the one the application named (`organization_id` of its request). */
  organizationMismatch: { code: 'BAD_REQUEST', reason: 'organization_mismatch', message: 'The application asked for another organization' },
  /** The person is not a member of the organization picked or named by the application. */
  organizationMembershipRequired: {
    code: 'FORBIDDEN', reason: 'organization_membership_required', message: 'You are not a member of this organization',
  },
  /** The person belongs to several organizations and the application asked for one: pick it first. */
  organizationSelectionRequired: {
    code: 'CONFLICT', reason: 'organization_selection_required', message: 'Choose the organization to continue with',
  },
  /** No application of the tenant has this id. */
  applicationNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Application not found' },
});

/** The `details.reason` of each entry of OIDC_ERRORS, by entry name (for routers' `errorReasons`). */
export const OIDC_REASONS = reasonsOf(OIDC_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    oidc: typeof OIDC_REASONS;
  }
}
