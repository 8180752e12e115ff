import { EntitySchema } from '@mikro-orm/core';

/** How a connection's identity provider speaks: SAML 2.0 Web Browser SSO, or OpenID Connect (code flow). */
export type SsoProtocol = 'saml' | 'oidc';

/**
 * An enterprise single sign-on connection (docs/sso.md): a customer company's SAML 2.0 or OpenID
 * Connect identity provider. People whose email domain is one of the connection's domains sign in there; the first
 * sign-in creates or links their account and, with an organization, makes them a member of it.
 */
export interface SsoConnection {
  id: string;
  tenantId: string;
  name: string;
  protocol: SsoProtocol;
  /** The organization the connection's people join on their first sign-in, or null. */
  organizationId: string | null;
  /** Organization role names given with that membership. */
  defaultOrganizationRoles: string[];
  /** True when the Admin states that the provider itself asks for a second factor (docs/sso.md "MFA"). */
  providerPerformsMfa: boolean;
  /** SAML: the identity provider's entity id (`Issuer` of its responses). */
  samlIdpEntityId: string | null;
  /** SAML: its SingleSignOnService location for the HTTP-Redirect binding. */
  samlSsoUrl: string | null;
  /** SAML: its signing certificates, PEM; a response verifies with any of them (rollover). */
  samlCertificates: string[] | null;
  /** SAML: the URL the metadata was read from, when it was given by URL. */
  samlMetadataUrl: string | null;
  /** SAML: the SP's private key (PKCS #8 PEM) as AES-256-GCM ciphertext, associated data `sso-sp-key:<tenantId>:<id>`. */
  spPrivateKeyEnc: string | null;
  /** SAML: the SP's self-signed certificate (PEM), published in its metadata. */
  spCertificate: string | null;
  /** SAML: sign AuthnRequests (HTTP-Redirect binding signature) with the SP key. */
  signAuthnRequests: boolean;
  /** OpenID Connect: the provider's issuer identifier, as its discovery document spells it. */
  oidcIssuer: string | null;
  oidcClientId: string | null;
  /** OpenID Connect: AES-256-GCM ciphertext of the client secret, associated data `sso-client-secret:<tenantId>:<id>`. */
  oidcClientSecretEnc: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const SsoConnectionSchema = new EntitySchema<SsoConnection>({
  name: 'SsoConnection',
  tableName: 'sso_connection',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    name: { type: 'string', length: 100 },
    protocol: { type: 'string', length: 8 },
    organizationId: { type: 'uuid', nullable: true },
    defaultOrganizationRoles: { type: 'json' },
    providerPerformsMfa: { type: 'boolean' },
    samlIdpEntityId: { type: 'string', length: 1024, nullable: true },
    samlSsoUrl: { type: 'string', length: 2048, nullable: true },
    samlCertificates: { type: 'json', nullable: true },
    samlMetadataUrl: { type: 'string', length: 2048, nullable: true },
    spPrivateKeyEnc: { type: 'text', nullable: true },
    spCertificate: { type: 'text', nullable: true },
    signAuthnRequests: { type: 'boolean' },
    oidcIssuer: { type: 'string', length: 512, nullable: true },
    oidcClientId: { type: 'string', length: 255, nullable: true },
    oidcClientSecretEnc: { type: 'text', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/** One email domain routed to a connection; unique in the tenant. */
export interface SsoConnectionDomain {
  tenantId: string;
  domain: string;
  connectionId: string;
}

export const SsoConnectionDomainSchema = new EntitySchema<SsoConnectionDomain>({
  name: 'SsoConnectionDomain',
  tableName: 'sso_connection_domain',
  properties: {
    tenantId: { type: 'uuid', primary: true },
    domain: { type: 'string', length: 253, primary: true },
    connectionId: { type: 'uuid' },
  },
});

/** Why an AuthnRequest was sent: a person's sign-in, or an Admin's test of the connection. */
export type SsoRequestPurpose = 'sign_in' | 'test';

/**
 * One SAML AuthnRequest this service sent (SAML 2.0 Core §3.4.1), bound to the browser that started
 * it; after the assertion consumer service verified the answer, it holds the verified identity until
 * that browser completes the sign-in with the single-use completion code.
 */
export interface SsoAuthRequest {
  id: string;
  tenantId: string;
  connectionId: string;
  /** The AuthnRequest's `ID`, which the response's `InResponseTo` must name. */
  requestId: string;
  /** Lower-case hex SHA-256 of the browser-binding cookie value. */
  browserBindingHash: string;
  /** `sign_in`, or `test`: an Admin trying the connection, whose answer shows what the IdP sent and signs no one in. */
  purpose: SsoRequestPurpose;
  /** A path of this service to open after the sign-in, or null. */
  returnTo: string | null;
  /** OpenID Connect: ciphertext of `{nonce, codeVerifier}`, associated data `sso-request:<tenantId>:<id>`; null for SAML. */
  secretsEnc: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** Set when a response answered the request (accepted or not): a request is answered once. */
  consumedAt: Date | null;
  /** Lower-case hex SHA-256 of the completion code the browser brings back. */
  completionHash: string | null;
  /** AES-256-GCM ciphertext of the verified identity, associated data `sso-identity:<tenantId>:<id>`. */
  identityEnc: string | null;
  completionExpiresAt: Date | null;
  completedAt: Date | null;
}

export const SsoAuthRequestSchema = new EntitySchema<SsoAuthRequest>({
  name: 'SsoAuthRequest',
  tableName: 'sso_auth_request',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    connectionId: { type: 'uuid' },
    requestId: { type: 'string', length: 128 },
    browserBindingHash: { type: 'string', length: 64 },
    purpose: { type: 'string', length: 8 },
    returnTo: { type: 'string', length: 2048, nullable: true },
    secretsEnc: { type: 'text', nullable: true },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
    consumedAt: { type: 'Date', nullable: true },
    completionHash: { type: 'string', length: 64, nullable: true },
    identityEnc: { type: 'text', nullable: true },
    completionExpiresAt: { type: 'Date', nullable: true },
    completedAt: { type: 'Date', nullable: true },
  },
});

/** The id of an accepted assertion, kept until it expires so that it is never accepted again. */
export interface SsoAssertion {
  connectionId: string;
  assertionId: string;
  tenantId: string;
  expiresAt: Date;
}

export const SsoAssertionSchema = new EntitySchema<SsoAssertion>({
  name: 'SsoAssertion',
  tableName: 'sso_assertion',
  properties: {
    connectionId: { type: 'uuid', primary: true },
    assertionId: { type: 'string', length: 256, primary: true },
    tenantId: { type: 'uuid' },
    expiresAt: { type: 'Date' },
  },
});
