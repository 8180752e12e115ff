import { newUser } from '../../entities/new-user.js';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Config } from '../../config.js';
import { IdpAuthRequestSchema, IdpIdentitySchema } from '../../entities/idp.js';
import { TenantSchema, type Tenant } from '../../entities/tenant.js';
import { UserSchema, type User } from '../../entities/user.js';
import { normalizeEmail } from '../../lib/email.js';
import { badRequest, isUniqueViolation, unauthorized } from '../../lib/errors.js';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import type { Keyring } from '../../security/keyring.js';
import { sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import type { SignIn } from '../sign-in/password-sign-in-service.js';
import type { IdpClientCredentials, IdpIdentityClaims, IdpProviderClient } from './idp-provider-client.js';
import type { SessionService } from '../sessions/session-service.js';
import { findLiveUserByEmail } from '../users/user-lookup.js';

/** Seconds an authorization request (its state, nonce and PKCE verifier) stays usable. */
export const IDP_AUTH_REQUEST_TTL_SECONDS = 600;
/** Seconds a spent or expired request row is kept, so a replay is reported as such, before it is purged. */
export const IDP_AUTH_REQUEST_RETENTION_SECONDS = 3_600;

/** The query of `GET oauth/idp/callback` (RFC 6749 §4.1.2, plus RFC 9207 `iss`; docs/idp.md). */
export interface IdpCallbackParams {
  code?: string | undefined;
  state?: string | undefined;
  error?: string | undefined;
  error_description?: string | undefined;
  iss?: string | undefined;
}

/** The tenant's IdP settings as the Tenant resource shows them (docs/idp.md); never the secret. */
export interface IdpSettingsView {
  idpOauthEnabled: boolean;
  idpClientId: string;
  hasIdpClientSecret: boolean;
}

interface ConsumedRequestRow {
  id: string;
  secrets_enc: string;
  issuer: string;
}

interface RequestStateRow {
  consumed_at: Date | null;
  expires_at: Date;
}

interface LinkRow {
  id: string;
  user_id: string;
}

const storedSecrets = z.object({ codeVerifier: z.string().min(1), nonce: z.string().min(1) });
const validEmail = z.email().max(254);

/** Associated data binding a tenant's encrypted client secret to it (shared with key rotation). */
export function idpClientSecretAssociatedData(tenantId: string): string {
  return `idp-client-secret:${tenantId}`;
}

function authRequestAssociatedData(tenantId: string, requestId: string): string {
  return `idp-auth-request:${tenantId}:${requestId}`;
}

/** The `idpOauthEnabled` / `idpClientId` / `hasIdpClientSecret` fields of a tenant. */
export function idpSettingsView(tenant: Tenant): IdpSettingsView {
  const hasSecret = tenant.idpClientSecretEnc !== null && tenant.idpClientSecretEnc !== '';
  return {
    idpOauthEnabled: Boolean(tenant.idpClientId) && hasSecret,
    idpClientId: tenant.idpClientId ?? '',
    hasIdpClientSecret: hasSecret,
  };
}

/**
 * External identity-provider sign-in (docs/idp.md): the tenant's
 * client credentials, the start of an OpenID Connect authorization code flow with PKCE, and the
 * callback that signs in, links or creates the user.
 */
export class IdpService {
  constructor(
    private readonly config: Config,
    private readonly keyring: Keyring,
    private readonly provider: IdpProviderClient,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
  ) {}

  /** `${PUBLIC_URL}/v1/<slug>/oauth/idp/callback`: the redirect URI registered at the provider. */
  redirectUri(tenant: Tenant): string {
    return `${this.config.publicUrl}/v1/${encodeURIComponent(tenant.slug)}/oauth/idp/callback`;
  }

  /**
   * Sets (or replaces) the tenant's client id and secret; the secret is stored only as keyring
   * ciphertext. Audits `IdpOauthLinked` (details: client id, never the secret).
   */
  async putCredentials(em: EntityManager, tenant: Tenant, clientId: string, clientSecret: string, actor: Actor, meta: RequestMeta): Promise<void> {
    const secretEnc = this.keyring.encrypt(clientSecret, idpClientSecretAssociatedData(tenant.id));
    await em.transactional(async (tx) => {
      await tx.nativeUpdate(TenantSchema, { id: tenant.id }, { idpClientId: clientId, idpClientSecretEnc: secretEnc, updatedAt: new Date() });
      await this.audit.record(tx, {
        tenantId: tenant.id,
        action: 'IdpOauthLinked',
        actor,
        target: { type: 'tenant', id: tenant.id },
        meta,
        details: { clientId, replaced: tenant.idpClientId !== null, redirectUri: this.redirectUri(tenant) },
      });
    });
  }

  /**
   * Removes the tenant's client id and secret, which turns the sign-in off; flows already started
   * can no longer complete. Users' provider links are kept for when credentials are set again.
   * Audits `IdpOauthUnlinked` when something was removed; idempotent otherwise.
   */
  async deleteCredentials(em: EntityManager, tenant: Tenant, actor: Actor, meta: RequestMeta): Promise<void> {
    await em.transactional(async (tx) => {
      const cleared = (await tx.execute(
        `update tenant set idp_client_id = null, idp_client_secret_enc = null, updated_at = ?
          where id = ? and (idp_client_id is not null or idp_client_secret_enc is not null)
          returning id`,
        [new Date(), tenant.id],
      )) as { id: string }[];
      await tx.execute('delete from idp_auth_request where tenant_id = ?', [tenant.id]);
      if (cleared.length === 0) return;
      await this.audit.record(tx, {
        tenantId: tenant.id,
        action: 'IdpOauthUnlinked',
        actor,
        target: { type: 'tenant', id: tenant.id },
        meta,
        details: { clientId: tenant.idpClientId },
      });
    });
  }

  /**
   * Starts a sign-in: a single-use authorization request (hashed `state`, encrypted `nonce` and PKCE
   * verifier, valid {@link IDP_AUTH_REQUEST_TTL_SECONDS}) and the provider URL to send the browser to.
   * @returns the authorization URL.
   * @throws ApiError 400 `idp_not_configured`, 400 `idp_unavailable`.
   */
  async start(em: EntityManager, tenant: Tenant): Promise<string> {
    const credentials = this.credentialsOf(tenant);
    const issuer = this.config.idpIssuer;
    const request = await this.provider.authorizationRequest(issuer, credentials, this.redirectUri(tenant));
    const now = new Date();
    const id = randomUUID();
    const secretsEnc = this.keyring.encrypt(
      JSON.stringify({ codeVerifier: request.codeVerifier, nonce: request.nonce }),
      authRequestAssociatedData(tenant.id, id),
    );
    await em.execute('delete from idp_auth_request where tenant_id = ? and expires_at < ?', [
      tenant.id,
      new Date(now.getTime() - IDP_AUTH_REQUEST_RETENTION_SECONDS * 1000),
    ]);
    await em.insert(IdpAuthRequestSchema, {
      id,
      tenantId: tenant.id,
      stateHash: sha256Hex(request.state),
      secretsEnc,
      issuer,
      createdAt: now,
      expiresAt: new Date(now.getTime() + IDP_AUTH_REQUEST_TTL_SECONDS * 1000),
      consumedAt: null,
    });
    return request.authorizationUrl;
  }

  /**
   * Completes a sign-in (OIDC Core §3.1.2.5–3.1.3.7): spends the state, exchanges the code, verifies
   * the ID token, then signs in the user linked to the provider subject, or links the live user with
   * the same provider-verified email (`IdpOauthLinked`), or creates an Active Member and links it.
   * A soft-deleted user is never revived. Audits `UserLogin` (method `idp`) and `SessionCreated`.
   * @throws ApiError 401 `idp_error` (the provider sent `error`), 400 `invalid_state` / `state_reused`
   *   / `state_expired`, 400 `missing_code`, 400 `idp_not_configured`, 400 `idp_unavailable`,
   *   401 `issuer_mismatch`, 401 `code_exchange_failed`, 401 `id_token_invalid`, 401 `idp_email_missing` /
   *   `idp_email_unverified`, 401 `user_suspended`.
   */
  async callback(em: EntityManager, tenant: Tenant, params: IdpCallbackParams, meta: RequestMeta): Promise<SignIn> {
    if (params.error !== undefined) {
      if (params.state !== undefined) await this.consumeRequest(em, tenant, params.state).catch(() => undefined);
      throw unauthorized('idp_error', 'The identity provider refused the sign-in', {
        error: params.error,
        ...(params.error_description ? { errorDescription: params.error_description } : {}),
      });
    }
    if (params.state === undefined) throw badRequest('invalid_state', 'The state parameter is missing');
    const request = await this.consumeRequest(em, tenant, params.state);
    if (params.code === undefined) throw badRequest('missing_code', 'The authorization code is missing');
    const credentials = this.credentialsOf(tenant);
    if (request.issuer !== this.config.idpIssuer) {
      throw badRequest('invalid_state', 'The sign-in was started against another identity provider; start again');
    }
    const secrets = storedSecrets.parse(
      JSON.parse(this.keyring.decrypt(request.secrets_enc, authRequestAssociatedData(tenant.id, request.id))),
    );
    const identity = await this.provider.exchangeCode(
      request.issuer,
      credentials,
      this.redirectUri(tenant),
      { code: params.code, state: params.state, iss: params.iss },
      secrets,
    );
    try {
      return await this.signInIdentity(em, tenant, identity, meta);
    } catch (err) {
      // Two first sign-ins of the same person at once: the loser finds the winner's link on retry.
      if (isUniqueViolation(err)) return this.signInIdentity(em, tenant, identity, meta);
      throw err;
    }
  }

  /** The tenant's decrypted client credentials. @throws ApiError 400 `idp_not_configured`. */
  private credentialsOf(tenant: Tenant): IdpClientCredentials {
    if (tenant.idpClientId === null || tenant.idpClientSecretEnc === null) {
      throw badRequest('idp_not_configured', 'Sign-in with the identity provider is not configured for this tenant');
    }
    return {
      clientId: tenant.idpClientId,
      clientSecret: this.keyring.decrypt(tenant.idpClientSecretEnc, idpClientSecretAssociatedData(tenant.id)),
    };
  }

  /**
   * Marks the request of `state` as spent, atomically, so a state is accepted once.
   * @throws ApiError 400 `invalid_state` (unknown, or of another tenant), `state_reused`, `state_expired`.
   */
  private async consumeRequest(em: EntityManager, tenant: Tenant, state: string): Promise<ConsumedRequestRow> {
    const now = new Date();
    const stateHash = sha256Hex(state);
    const consumed = (await em.execute(
      `update idp_auth_request set consumed_at = ?
        where tenant_id = ? and state_hash = ? and consumed_at is null and expires_at > ?
        returning id, secrets_enc, issuer`,
      [now, tenant.id, stateHash, now],
    )) as ConsumedRequestRow[];
    const row = consumed[0];
    if (row) return row;
    const rows = (await em.execute('select consumed_at, expires_at from idp_auth_request where tenant_id = ? and state_hash = ?', [
      tenant.id,
      stateHash,
    ])) as RequestStateRow[];
    const known = rows[0];
    if (!known) throw badRequest('invalid_state', 'The state parameter does not belong to a sign-in started here');
    if (known.consumed_at) throw badRequest('state_reused', 'This sign-in was already completed or abandoned; start again');
    throw badRequest('state_expired', 'The sign-in took too long; start again');
  }

  /** Resolves the provider identity to a user (link, email match or new Member) and starts a session. */
  private async signInIdentity(em: EntityManager, tenant: Tenant, identity: IdpIdentityClaims, meta: RequestMeta): Promise<SignIn> {
    return em.transactional(async (tx) => {
      const now = new Date();
      const email = this.verifiedEmailOf(identity);
      let user = await this.linkedUser(tx, tenant, identity);
      if (!user) {
        if (!email) {
          throw identity.email === null
            ? unauthorized('idp_email_missing', 'The identity provider did not share an email address')
            : unauthorized('idp_email_unverified', 'The identity provider has not verified this email address');
        }
        const existing = await findLiveUserByEmail(tx, tenant.id, email);
        user = existing ?? (await this.createMember(tx, tenant, email, identity, meta, now));
        await this.link(tx, tenant, user, identity, existing ? 'verified_email' : 'new_user', meta, now);
      }
      if (user.status === 'Suspended') throw unauthorized('user_suspended', 'The account is suspended');
      if (user.status === 'Pending') await this.verifyPendingEmail(tx, tenant, user, email, meta, now);
      await tx.execute('update idp_identity set last_login_at = ? where tenant_id = ? and issuer = ? and subject = ?', [
        now, tenant.id, identity.issuer, identity.subject,
      ]);
      await this.audit.record(tx, {
        tenantId: tenant.id,
        action: 'UserLogin',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        meta,
        details: { method: 'idp', issuer: identity.issuer },
      });
      const tokens = await this.sessions.start(tx, tenant, user, meta);
      return { user, tokens };
    });
  }

  /** The provider email, lower-cased, when the provider verified it and it is a valid address. */
  private verifiedEmailOf(identity: IdpIdentityClaims): string | null {
    if (!identity.emailVerified || identity.email === null) return null;
    const email = normalizeEmail(identity.email);
    return validEmail.safeParse(email).success ? email : null;
  }

  /**
   * The live user linked to the provider subject, or null. A link to a soft-deleted user is removed
   * (the user stays deleted; the person is treated as new).
   */
  private async linkedUser(tx: EntityManager, tenant: Tenant, identity: IdpIdentityClaims): Promise<User | null> {
    const links = (await tx.execute(
      'select id, user_id from idp_identity where tenant_id = ? and issuer = ? and subject = ? for update',
      [tenant.id, identity.issuer, identity.subject],
    )) as LinkRow[];
    const link = links[0];
    if (!link) return null;
    const user = await tx.findOne(UserSchema, { id: link.user_id, tenantId: tenant.id }, { disableIdentityMap: true });
    if (user && user.deletedAt === null) return user;
    await tx.execute('delete from idp_identity where id = ? and tenant_id = ?', [link.id, tenant.id]);
    return null;
  }

  private async link(
    tx: EntityManager,
    tenant: Tenant,
    user: User,
    identity: IdpIdentityClaims,
    via: 'verified_email' | 'new_user',
    meta: RequestMeta,
    now: Date,
  ): Promise<void> {
    await tx.insert(IdpIdentitySchema, {
      id: randomUUID(),
      tenantId: tenant.id,
      userId: user.id,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email === null ? null : normalizeEmail(identity.email).slice(0, 254),
      createdAt: now,
      lastLoginAt: now,
    });
    await this.audit.record(tx, {
      tenantId: tenant.id,
      action: 'IdpOauthLinked',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      meta,
      details: { issuer: identity.issuer, subject: identity.subject, email: user.email, via },
    });
  }

  /** A new Active Member without a password, its email verified by the provider. Audits `UserSignup`. */
  private async createMember(tx: EntityManager, tenant: Tenant, email: string, identity: IdpIdentityClaims, meta: RequestMeta, now: Date): Promise<User> {
    const user = newUser({ tenantId: tenant.id, email, passwordHash: null, status: 'Active', role: 'Member', emailVerifiedAt: now }, now);
    await tx.insert(UserSchema, user);
    await this.audit.record(tx, {
      tenantId: tenant.id,
      action: 'UserSignup',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      meta,
      details: { email, role: user.role, via: 'idp', issuer: identity.issuer },
    });
    return user;
  }

  /**
   * A `Pending` user (email not yet verified) whose own address the provider has just verified
   * becomes Active (`UserEmailVerified`); otherwise the sign-in is refused like a password login.
   * @throws ApiError 401 `email_not_verified`.
   */
  private async verifyPendingEmail(tx: EntityManager, tenant: Tenant, user: User, email: string | null, meta: RequestMeta, now: Date): Promise<void> {
    if (email !== user.email) throw unauthorized('email_not_verified', 'The email address is not verified yet');
    await tx.nativeUpdate(UserSchema, { id: user.id, tenantId: tenant.id }, { status: 'Active', emailVerifiedAt: now, updatedAt: now });
    user.status = 'Active';
    user.emailVerifiedAt = now;
    await this.audit.record(tx, {
      tenantId: tenant.id,
      action: 'UserEmailVerified',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      meta,
      details: { email, via: 'idp' },
    });
  }
}
