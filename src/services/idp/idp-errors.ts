/**
 * Every `details.reason` the external-provider routes give (docs/idp.md) (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const IDP_REASONS = {
  /** The tenant has no provider credentials. */
  notConfigured: 'idp_not_configured',
  /** The provider could not be reached. */
  unavailable: 'idp_unavailable',
  /** The provider's discovery document could not be read. */
  discoveryFailed: 'idp_discovery_failed',
  /** The issuer is on a private, loopback or link-local address. */
  issuerNotAllowed: 'idp_issuer_not_allowed',
  /** The issuer is not a valid OpenID issuer URL. */
  invalidIssuer: 'invalid_issuer',
  /** The provider named another issuer than the one configured or started with. */
  issuerMismatch: 'issuer_mismatch',
  /** The provider answered with an OAuth error. */
  providerError: 'idp_error',
  /** The authorization code could not be exchanged. */
  codeExchangeFailed: 'code_exchange_failed',
  /** The ID token failed a check (`details.check`). */
  idTokenInvalid: 'id_token_invalid',
  /** Unknown `state`. */
  invalidState: 'invalid_state',
  /** The `state` was already used. */
  stateReused: 'state_reused',
  /** The `state` is past its 600 seconds. */
  stateExpired: 'state_expired',
  /** The callback carries no `code`. */
  missingCode: 'missing_code',
  /** The flow was started in another browser. */
  browserMismatch: 'browser_mismatch',
  /** The provider gave no email. */
  emailMissing: 'idp_email_missing',
  /** The provider does not vouch for the email. */
  emailUnverified: 'idp_email_unverified',
  /** The email's domain is not among the tenant's allowed domains. */
  emailDomainNotAllowed: 'idp_email_domain_not_allowed',
  /** A verified account has this email but no link to the provider identity; its owner links it signed in. */
  linkRequired: 'idp_link_required',
  /** A link flow's provider identity has another verified email than the account that started it. */
  linkEmailMismatch: 'idp_link_email_mismatch',
  /** A link flow's provider identity is already linked to another user. */
  identityLinkedElsewhere: 'idp_identity_linked_elsewhere',
  /** Changing the issuer needs a signed-in Admin (not an API key). */
  adminSessionRequired: 'admin_session_required',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    idp: typeof IDP_REASONS;
  }
}
