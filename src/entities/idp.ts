import { EntitySchema } from '@mikro-orm/core';

/**
 * One started external sign-in (OpenID Connect authorization code flow with PKCE, RFC 6749 §4.1,
 * RFC 7636): kept server-side between `oauth/idp/start` and `oauth/idp/callback`, single use and
 * short-lived. The `state` is stored only as its SHA-256 hash; the PKCE `code_verifier` and the
 * `nonce` only as keyring ciphertext.
 */
export interface IdpAuthRequest {
  id: string;
  tenantId: string;
  /** Lower-case hex SHA-256 of the `state` parameter. */
  stateHash: string;
  /** AES-256-GCM ciphertext of `{"codeVerifier","nonce"}`, associated data `idp-auth-request:<tenantId>:<id>`. */
  secretsEnc: string;
  /** The issuer the flow was started against (`IDP_ISSUER` at that time). */
  issuer: string;
  createdAt: Date;
  expiresAt: Date;
  /** Set when a callback presented the state; a second presentation is refused. */
  consumedAt: Date | null;
  /**
   * Lower-case hex SHA-256 of the browser-binding cookie value when the hosted pages started the flow
   * (`browser.idpStart`); the callback then needs that cookie. Null for API clients.
   */
  browserBindingHash?: string | null;
  /** The signed-in user who started a link flow (`me/idp/link`); the callback links to that user only. */
  linkUserId?: string | null;
}

export const IdpAuthRequestSchema = new EntitySchema<IdpAuthRequest>({
  name: 'IdpAuthRequest',
  tableName: 'idp_auth_request',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    stateHash: { type: 'string', length: 64, unique: true },
    secretsEnc: { type: 'text' },
    issuer: { type: 'string', length: 512 },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
    consumedAt: { type: 'Date', nullable: true },
    browserBindingHash: { type: 'string', length: 64, nullable: true },
    linkUserId: { type: 'uuid', nullable: true },
  },
});

/** A user's account at the external provider: the (issuer, `sub`) pair of its ID tokens (OIDC Core §2). */
export interface IdpIdentity {
  id: string;
  tenantId: string;
  userId: string;
  issuer: string;
  /** The provider's `sub` claim: stable and unique per issuer. */
  subject: string;
  /** The email the provider asserted when the link was made. */
  email: string | null;
  createdAt: Date;
  lastLoginAt: Date | null;
}

export const IdpIdentitySchema = new EntitySchema<IdpIdentity>({
  name: 'IdpIdentity',
  tableName: 'idp_identity',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid' },
    issuer: { type: 'string', length: 512 },
    subject: { type: 'string', length: 255 },
    email: { type: 'string', length: 254, nullable: true },
    createdAt: { type: 'Date' },
    lastLoginAt: { type: 'Date', nullable: true },
  },
});
