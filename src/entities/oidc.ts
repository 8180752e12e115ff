import { EntitySchema } from '@mikro-orm/core';

/** The kinds of application a tenant registers (docs/oidc.md "Applications"). */
export const APPLICATION_TYPES = ['web', 'spa', 'native', 'm2m'] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];

/** An application registered at a tenant's own OpenID Provider (docs/oidc.md "Applications"). */
export interface OidcApplication {
  id: string;
  tenantId: string;
  name: string;
  type: ApplicationType;
  clientId: string;
  /** Keyring ciphertext of the client secret; null for public applications. */
  clientSecretEnc: string | null;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  createdAt: Date;
  updatedAt: Date;
}

export const OidcApplicationSchema = new EntitySchema<OidcApplication>({
  name: 'OidcApplication',
  tableName: 'oidc_application',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    name: { type: 'string', length: 100 },
    type: { type: 'string', length: 10 },
    clientId: { type: 'string', length: 64, unique: true },
    clientSecretEnc: { type: 'text', nullable: true },
    redirectUris: { type: 'json' },
    postLogoutRedirectUris: { type: 'json' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/** An ES256 signing key of a tenant's OpenID Provider (docs/oidc.md "Key rotation"). */
export interface OidcSigningKey {
  kid: string;
  tenantId: string;
  alg: string;
  /** Keyring ciphertext of the private JWK. */
  privateJwkEnc: string;
  createdAt: Date;
  /** Set when a newer key took over; retired keys stay published for a while. */
  retiredAt: Date | null;
}

export const OidcSigningKeySchema = new EntitySchema<OidcSigningKey>({
  name: 'OidcSigningKey',
  tableName: 'oidc_signing_key',
  properties: {
    kid: { type: 'string', length: 64, primary: true },
    tenantId: { type: 'uuid' },
    alg: { type: 'string', length: 10 },
    privateJwkEnc: { type: 'text' },
    createdAt: { type: 'Date' },
    retiredAt: { type: 'Date', nullable: true },
  },
});

/**
 * One record of oidc-provider's storage for a tenant (codes, tokens, grants, sessions, interactions):
 * the library's JSON payload and the fields it looks records up by.
 */
export interface OidcPayloadRecord {
  tenantId: string;
  model: string;
  id: string;
  payload: Record<string, unknown>;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  /** The user (`sub`) the record belongs to, as text. */
  accountId: string | null;
  clientId: string | null;
  expiresAt: Date | null;
  consumedAt: Date | null;
}

export const OidcPayloadSchema = new EntitySchema<OidcPayloadRecord>({
  name: 'OidcPayload',
  tableName: 'oidc_payload',
  properties: {
    tenantId: { type: 'uuid', primary: true },
    model: { type: 'string', length: 40, primary: true },
    id: { type: 'string', length: 255, primary: true },
    payload: { type: 'json' },
    grantId: { type: 'string', length: 255, nullable: true },
    uid: { type: 'string', length: 255, nullable: true },
    userCode: { type: 'string', length: 255, nullable: true },
    accountId: { type: 'string', length: 255, nullable: true },
    clientId: { type: 'string', length: 255, nullable: true },
    expiresAt: { type: 'Date', nullable: true },
    consumedAt: { type: 'Date', nullable: true },
  },
});

/**
 * A hosted session of a user that signed in to one of the tenant's applications through its OpenID
 * Provider (one row per session and application), so ending the session ends the provider's state
 * and the session list shows the application sign-ins.
 */
export interface OidcHostedLogin {
  tenantId: string;
  userId: string;
  sessionId: string;
  /** The application's client id. */
  clientId: string;
  createdAt: Date;
  lastSignedInAt: Date;
}

export const OidcHostedLoginSchema = new EntitySchema<OidcHostedLogin>({
  name: 'OidcHostedLogin',
  tableName: 'oidc_hosted_login',
  properties: {
    tenantId: { type: 'uuid', primary: true },
    userId: { type: 'uuid', primary: true },
    sessionId: { type: 'uuid', primary: true },
    clientId: { type: 'string', length: 255, primary: true },
    createdAt: { type: 'Date' },
    lastSignedInAt: { type: 'Date' },
  },
});
