import { defineErrorCatalog, reasonsOf } from '../lib/errors.js';

/** The OAuth 2.0 error an identity provider answered (RFC 6749 §5.2), and its description when it gave one. */
type ProviderRefusal = { error: string; errorDescription?: string };

/** `details` of a provider refusal: `error`, and `errorDescription` only when the provider gave one. */
const refusalDetails = ({ error, errorDescription }: ProviderRefusal) => ({ error, ...(errorDescription ? { errorDescription } : {}) });

/**
 * Every error the external-provider routes give (docs/idp.md, docs/api-rules.md "Errors"): each
 * entry declares once its code, `details.reason` and message (src/lib/errors.ts
 * `defineErrorCatalog`); entries sharing a reason give it in another context.
 */
export const IDP_ERRORS = defineErrorCatalog({
  /** The tenant has no provider credentials. */
  notConfigured: { code: 'BAD_REQUEST', reason: 'idp_not_configured', message: 'Sign-in with the identity provider is not configured for this tenant' },
  /** The provider could not be reached. */
  unavailable: { code: 'BAD_REQUEST', reason: 'idp_unavailable', message: 'The identity provider could not be reached' },
  /** The provider's discovery document could not be read (`failure`: the openid-client code, or `unreachable`). */
  discoveryFailed: {
    code: 'BAD_REQUEST', reason: 'idp_discovery_failed',
    message: ({ issuer, failure }: { issuer: string; failure: string }) => `OpenID discovery failed at ${issuer}/.well-known/openid-configuration: ${failure}`,
  },
  /** The issuer resolves to a private, loopback or link-local address. */
  issuerNotAllowed: { code: 'BAD_REQUEST', reason: 'idp_issuer_not_allowed', message: 'The issuer does not resolve to a public address' },
  /** The issuer URL names a host the deployment does not allow (`problem`: which rule, src/services/idp/idp-outbound.ts). */
  issuerUrlNotAllowed: { code: 'BAD_REQUEST', reason: 'idp_issuer_not_allowed', message: ({ problem }: { problem: string }) => problem },
  /** The issuer is not a valid OpenID issuer URL (`problem`: why, src/services/idp/idp-outbound.ts). */
  invalidIssuer: { code: 'BAD_REQUEST', reason: 'invalid_issuer', message: ({ problem }: { problem: string }) => problem },
  /** The discovery document names another issuer than the one configured. */
  discoveryIssuerMismatch: { code: 'BAD_REQUEST', reason: 'issuer_mismatch', message: 'The discovery document names another issuer than the one given' },
  /** The authorization response names another issuer (RFC 9207). */
  responseIssuerMismatch: {
    code: 'UNAUTHORIZED', reason: 'issuer_mismatch', message: 'The authorization response does not come from the configured identity provider',
  },
  /** The ID token names another issuer than the one the sign-in started with. */
  idTokenIssuerMismatch: { code: 'UNAUTHORIZED', reason: 'issuer_mismatch', message: 'The ID token was not issued by this tenant\'s identity provider' },
  /** The provider answered the sign-in with an OAuth error (`details.error`, `details.errorDescription`). */
  providerError: {
    code: 'UNAUTHORIZED', reason: 'idp_error', message: 'The identity provider refused the sign-in', details: refusalDetails,
  },
  /** The provider refused the authorization code (`details.error`, `details.errorDescription`). */
  codeRefused: {
    code: 'UNAUTHORIZED', reason: 'code_exchange_failed', message: 'The identity provider refused the authorization code', details: refusalDetails,
  },
  /** The provider refused the client authentication of the code exchange (`details.error`). */
  clientAuthenticationRefused: {
    code: 'UNAUTHORIZED', reason: 'code_exchange_failed', message: 'The identity provider refused the client authentication',
    details: ({ error }: { error: string }) => ({ error }),
  },
  /** The provider answered the code exchange with something that is not a token response. */
  codeExchangeFailed: { code: 'UNAUTHORIZED', reason: 'code_exchange_failed', message: 'The identity provider answered the code exchange with an error' },
  /** The ID token failed a check (`details.check`). */
  idTokenInvalid: {
    code: 'UNAUTHORIZED', reason: 'id_token_invalid', message: 'The ID token from the identity provider failed verification',
    details: ({ check }: { check: string }) => ({ check }),
  },
  /** The token response carried no ID token. */
  idTokenMissing: { code: 'UNAUTHORIZED', reason: 'id_token_invalid', message: 'The identity provider returned no ID token' },
  /** The callback carries no `state`. */
  stateMissing: { code: 'BAD_REQUEST', reason: 'invalid_state', message: 'The state parameter is missing' },
  /** Unknown `state`. */
  invalidState: { code: 'BAD_REQUEST', reason: 'invalid_state', message: 'The state parameter does not belong to a sign-in started here' },
  /** The `state` was issued for another provider than the tenant's current one. */
  stateOfAnotherProvider: { code: 'BAD_REQUEST', reason: 'invalid_state', message: 'The sign-in was started against another identity provider; start again' },
  /** The account that started a link flow is gone. */
  linkingAccountGone: { code: 'BAD_REQUEST', reason: 'invalid_state', message: 'The account that started this link no longer exists; start again' },
  /** The `state` was already used. */
  stateReused: { code: 'BAD_REQUEST', reason: 'state_reused', message: 'This sign-in was already completed or abandoned; start again' },
  /** The `state` is past its 600 seconds. */
  stateExpired: { code: 'BAD_REQUEST', reason: 'state_expired', message: 'The sign-in took too long; start again' },
  /** The callback carries no `code`. */
  missingCode: { code: 'BAD_REQUEST', reason: 'missing_code', message: 'The authorization code is missing' },
  /** The callback came without the browser-binding cookie of the flow. */
  browserNotBound: { code: 'UNAUTHORIZED', reason: 'browser_mismatch', message: 'This sign-in was not started in this browser; start again here' },
  /** The flow was started in another browser. */
  browserMismatch: { code: 'UNAUTHORIZED', reason: 'browser_mismatch', message: 'This sign-in was started in another browser; start again here' },
  /** The provider gave no email. */
  emailMissing: { code: 'UNAUTHORIZED', reason: 'idp_email_missing', message: 'The identity provider did not share an email address' },
  /** The provider does not vouch for the email. */
  emailUnverified: { code: 'UNAUTHORIZED', reason: 'idp_email_unverified', message: 'The identity provider has not verified this email address' },
  /** The email's domain is not among the tenant's allowed domains. */
  emailDomainNotAllowed: {
    code: 'UNAUTHORIZED', reason: 'idp_email_domain_not_allowed', message: 'Sign-in with the identity provider is limited to other email domains',
  },
  /** A verified account has this email but no link to the provider identity; its owner links it signed in. */
  linkRequired: {
    code: 'UNAUTHORIZED', reason: 'idp_link_required', message: 'An account with this email address exists; sign in to it and link the provider from there',
  },
  /** A link flow's provider identity has another verified email than the account that started it. */
  linkEmailMismatch: {
    code: 'UNAUTHORIZED', reason: 'idp_link_email_mismatch', message: 'The provider account must have the same verified email address as your account',
  },
  /** A link flow's provider identity is already linked to another user. */
  identityLinkedElsewhere: {
    code: 'CONFLICT', reason: 'idp_identity_linked_elsewhere', message: 'This provider account is already linked to another user of this tenant',
  },
  /** Changing the issuer needs a signed-in Admin (not an API key). */
  adminSessionRequired: {
    code: 'FORBIDDEN', reason: 'admin_session_required', message: 'Changing the identity provider\'s issuer needs a signed-in Admin, not an API key',
  },
});

/** The `details.reason` of each entry of IDP_ERRORS, by entry name (for routers' `errorReasons`). */
export const IDP_REASONS = reasonsOf(IDP_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    idp: typeof IDP_REASONS;
  }
}
