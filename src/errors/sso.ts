import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error of enterprise single sign-on (docs/sso.md, docs/api-rules.md "Errors"): each entry
 * declares once its code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`).
 * A refused SAML response is audited `UserLoginFailed` with the same reason.
 */
export const SSO_ERRORS = defineErrorCatalog({
  /** No connection of the tenant has this id. */
  connectionNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'SSO connection not found' },
  /** No connection of the tenant routes the address's domain. */
  noConnectionForEmail: { code: 'NOT_FOUND', reason: 'sso_connection_not_found', message: 'No single sign-on connection serves this email domain' },
  /** A domain is routed to another connection of the tenant already. */
  domainTaken: {
    code: 'CONFLICT', reason: 'sso_domain_taken',
    message: ({ domain }: { domain: string }) => `The domain ${domain} belongs to another SSO connection of this workspace`,
  },
  /** The identity provider's metadata could not be read (`problem`: what is wrong). */
  invalidMetadata: { code: 'BAD_REQUEST', reason: 'invalid_saml_metadata', message: ({ problem }: { problem: string }) => `The SAML metadata cannot be used: ${problem}` },
  /** A certificate is not an X.509 certificate in PEM or base64 DER. */
  invalidCertificate: { code: 'BAD_REQUEST', reason: 'invalid_saml_certificate', message: 'The certificate is not an X.509 certificate (PEM or base64)' },
  /** The SingleSignOnService URL is not an https URL (or http on a loopback host). */
  invalidSsoUrl: { code: 'BAD_REQUEST', reason: 'invalid_sso_url', message: 'The single sign-on URL must be an https URL (http only on a loopback host)' },
  /** `saml` given for an OpenID Connect connection, or `oidc` for a SAML one. */
  protocolMismatch: {
    code: 'BAD_REQUEST', reason: 'sso_protocol_mismatch', message: ({ protocol }: { protocol: string }) => `This connection speaks ${protocol}; its protocol cannot change`,
  },
  /** The response is not a SAML response this service can read (not base64 XML, a DTD, several assertions...). */
  responseInvalid: { code: 'UNAUTHORIZED', reason: 'saml_response_invalid', message: ({ problem }: { problem: string }) => `The SAML response was refused: ${problem}` },
  /** No signature of the response or assertion verifies with the connection's certificates. */
  signatureInvalid: { code: 'UNAUTHORIZED', reason: 'saml_signature_invalid', message: 'The SAML response is not signed by the connection\'s identity provider' },
  /** SAML `InResponseTo` or OpenID `state` names no open request of this connection (unknown, answered, expired, or unsolicited). */
  requestUnknown: {
    code: 'UNAUTHORIZED', reason: 'sso_request_unknown', message: 'The identity provider\'s answer does not belong to a sign-in started here; start again',
  },
  /** The audience is not this connection's service provider. */
  audienceMismatch: { code: 'UNAUTHORIZED', reason: 'saml_audience_mismatch', message: 'The SAML assertion is meant for another service provider' },
  /** `Destination` or `Recipient` is not this connection's assertion consumer service. */
  recipientMismatch: { code: 'UNAUTHORIZED', reason: 'saml_recipient_mismatch', message: 'The SAML response was sent to another assertion consumer service' },
  /** The time conditions do not hold (2 minutes of skew). */
  assertionExpired: { code: 'UNAUTHORIZED', reason: 'saml_assertion_expired', message: 'The SAML assertion is expired or not yet valid' },
  /** The assertion was accepted before. */
  assertionReplayed: { code: 'UNAUTHORIZED', reason: 'saml_assertion_replayed', message: 'This SAML assertion was used before' },
  /** The identity provider answered with an error status. */
  providerError: { code: 'UNAUTHORIZED', reason: 'saml_idp_error', message: ({ status }: { status: string }) => `The identity provider refused the sign-in: ${status}` },
  /** The assertion carries no usable email address. */
  emailMissing: { code: 'UNAUTHORIZED', reason: 'sso_email_missing', message: 'The identity provider did not send an email address' },
  /** The address is not of one of the connection's domains. */
  emailDomainMismatch: {
    code: 'UNAUTHORIZED', reason: 'sso_email_domain_mismatch', message: 'The identity provider sent an address outside the connection\'s domains',
  },
  /** An account of the address with an unverified address but an Admin role or its own factors: never taken over. */
  protectedAccount: {
    code: 'UNAUTHORIZED', reason: 'sso_account_protected',
    message: 'An account with this address has its own second factor or is an Admin but never verified the address; sign in to it and verify the address first',
  },
  /** The completion code is unknown, used, or older than 2 minutes. */
  completionInvalid: { code: 'UNAUTHORIZED', reason: 'sso_completion_invalid', message: 'This sign-in cannot be completed any more; start again' },
  /** The sign-in was started in another browser (or without its cookie). */
  browserMismatch: { code: 'UNAUTHORIZED', reason: 'browser_mismatch', message: 'This sign-in was started in another browser; start again here' },
});

/** The `details.reason` of each entry of SSO_ERRORS, by entry name (for routers' `errorReasons`). */
export const SSO_REASONS = reasonsOf(SSO_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    sso: typeof SSO_REASONS;
  }
}
