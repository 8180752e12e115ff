import { ORGANIZATIONS_CLAIM, ORGANIZATIONS_SCOPE, organizationsClaim } from '../organizations/organization-claims.js';
import { hkdfSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import Provider, { errors as oidcErrors, type GrantInstance, type InteractionDetails, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import { unauthorized } from '../../lib/errors.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import type { AuditService } from '../audit/audit-service.js';
import type { SessionService } from '../sessions/session-service.js';
import type { ApplicationService } from './application-service.js';
import { OIDC_REASONS } from './oidc-errors.js';
import * as payloads from './oidc-payload-queries.js';
import { SIGNING_ALG, type SigningKeyService } from './signing-keys.js';
import { findActiveAccount } from '../users/user-queries.js';
import { findHostedLoginSessionsOfUser, recordHostedLogin } from './oidc-hosted-login-queries.js';

/** Lifetimes in seconds (docs/oidc.md "Tokens"). */
export const OIDC_TTL = {
  AccessToken: 3600,
  ClientCredentials: 3600,
  AuthorizationCode: 60,
  IdToken: 3600,
  RefreshToken: 30 * 24 * 3600,
  Interaction: 600,
  Session: 14 * 24 * 3600,
  Grant: 30 * 24 * 3600,
} as const;

/** Most tenant providers kept built in one process; the least recently used goes first. */
const PROVIDER_CACHE_SIZE = 200;
/** Seconds a built provider is reused before it is rebuilt (picks up rotated signing keys). */
const PROVIDER_REBUILD_SECONDS = 600;

/** The path, under the issuer, of the hosted sign-in hand-off of one interaction. */
export const INTERACTION_PATH = '/interaction/';

/** The scope of a JWT access token for one of the tenant's own APIs (RFC 8707 resource, RFC 9068 format). */
export const API_SCOPE = 'api';
/** The scopes every application of a tenant may be granted (no consent page for first-party apps). */
const GRANTED_SCOPE = `openid email offline_access ${API_SCOPE} ${ORGANIZATIONS_SCOPE}`;

/** The `resource` values of an authorization request (RFC 8707: one or several). */
function resourcesOf(params: Record<string, unknown>): string[] {
  const value = params.resource;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Grants the tenant's scopes, and the API scope at each requested resource. */
function grantAll(grant: GrantInstance, resources: string[]): GrantInstance {
  grant.addOIDCScope(GRANTED_SCOPE);
  for (const resource of resources) grant.addResourceScope(resource, API_SCOPE);
  return grant;
}

interface CachedProvider {
  provider: Provider;
  builtAt: number;
  tenantUpdatedAt: number;
}

/** The signed-in hosted-page session completing an interaction. */
export interface HostedSession {
  userId: string;
  sessionId: string;
  /** When the session last proved who the user is (password, factor, passkey, provider). */
  authenticatedAt: Date;
  method: string | null;
}

/**
 * Each tenant as an OpenID Provider (docs/oidc.md), with oidc-provider doing the protocol:
 * discovery, authorization code with PKCE, token, userinfo, JWKS, introspection (RFC 7662),
 * revocation (RFC 7009), RP-initiated logout, refresh-token rotation and client credentials.
 * One provider per tenant issuer `{PUBLIC_URL}/v1/{slug}/oidc`, built on first use and cached
 * (bounded, rebuilt when the tenant changes or after PROVIDER_REBUILD_SECONDS).
 */
export class OidcProviderService {
  private readonly cache = new Map<string, CachedProvider>();
  private readonly building = new Map<string, Promise<Provider>>();

  constructor(
    private readonly config: Config,
    private readonly orm: MikroORM,
    private readonly applications: ApplicationService,
    private readonly signingKeys: SigningKeyService,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly logger: Logger,
  ) {}

  /** `{PUBLIC_URL}/v1/{slug}/oidc`: the tenant's issuer identifier. */
  issuerOf(tenant: Pick<Tenant, 'slug'>): string {
    return `${this.config.publicUrl}/v1/${encodeURIComponent(tenant.slug)}/oidc`;
  }

  /** The tenant's provider, built once and reused; a changed tenant gets a new one. */
  async providerFor(tenant: Tenant): Promise<Provider> {
    const cached = this.cache.get(tenant.id);
    const updatedAt = new Date(tenant.updatedAt).getTime();
    if (cached && cached.tenantUpdatedAt === updatedAt && Date.now() - cached.builtAt < PROVIDER_REBUILD_SECONDS * 1000) {
      this.cache.delete(tenant.id);
      this.cache.set(tenant.id, cached);
      return cached.provider;
    }
    let pending = this.building.get(tenant.id);
    if (!pending) {
      pending = this.build(tenant)
        .then((provider) => {
          this.cache.delete(tenant.id);
          this.cache.set(tenant.id, { provider, builtAt: Date.now(), tenantUpdatedAt: updatedAt });
          while (this.cache.size > PROVIDER_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
          return provider;
        })
        .finally(() => this.building.delete(tenant.id));
      this.building.set(tenant.id, pending);
    }
    return pending;
  }

  /** Drops the tenant's built provider (tenant deleted or changed). */
  forget(tenantId: string): void {
    this.cache.delete(tenantId);
  }

  /**
   * What the hosted sign-in page needs to know about a pending interaction: the application's name
   * and whether it asked for a new sign-in (`prompt=login` or `max_age`).
   * @throws ApiError 401 `interaction_not_found` when the interaction is unknown, expired, or its
   *   cookie is not this browser's.
   */
  async interactionInfo(tenant: Tenant, req: IncomingMessage, res: ServerResponse): Promise<{ clientName: string; freshSignInRequired: boolean; notBefore: number }> {
    const provider = await this.providerFor(tenant);
    const details = await this.details(provider, req, res);
    const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : '';
    const client = await this.applications.clientMetadata(this.orm.em.fork() as EntityManager, tenant.id, clientId);
    return { clientName: client?.client_name ?? clientId, freshSignInRequired: freshSignInAfter(details) !== undefined, notBefore: freshSignInAfter(details) ?? 0 };
  }

  /**
   * Completes a pending interaction with the hosted-page session the person holds: the login (user
   * id, the time the session last proved who they are, its method) and, when the application asked
   * for consent, the grant of the tenant's scopes (no consent page for the tenant's own apps).
   * Records which hosted session signed in, so RP-initiated logout ends it too. Audits `OidcSignIn`.
   * @returns the URL the browser goes to next (the provider's resume endpoint).
   * @throws ApiError 401 `interaction_not_found`, `fresh_sign_in_required` (the application asked
   *   for a sign-in newer than this session's).
   */
  async completeInteraction(tenant: Tenant, session: HostedSession, req: IncomingMessage, res: ServerResponse, meta: RequestMeta): Promise<string> {
    const provider = await this.providerFor(tenant);
    const details = await this.details(provider, req, res);
    const notBefore = freshSignInAfter(details);
    const authTime = Math.floor(session.authenticatedAt.getTime() / 1000);
    if (notBefore !== undefined && authTime < notBefore) {
      throw unauthorized(OIDC_REASONS.freshSignInRequired, 'The application asked for a new sign-in');
    }
    const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : '';
    let result: Record<string, unknown>;
    if (details.prompt.name === 'login') {
      result = { login: { accountId: session.userId, ts: authTime, amr: session.method ? [session.method] : undefined, remember: true } };
    } else {
      if (details.session?.accountId !== session.userId) throw unauthorized(OIDC_REASONS.interactionNotFound, 'This sign-in belongs to another account');
      const grant = grantAll(new provider.Grant({ accountId: session.userId, clientId }), resourcesOf(details.params));
      result = { consent: { grantId: await grant.save() } };
    }
    const em = this.orm.em.fork() as EntityManager;
    await em.transactional(async (tx) => {
      await recordHostedLogin(tx, tenant.id, session.userId, session.sessionId, clientId);
      await this.audit.record(tx, {
        tenantId: tenant.id, action: 'OidcSignIn', actor: { type: 'user', id: session.userId }, target: { type: 'user', id: session.userId }, meta,
        details: { clientId, prompt: details.prompt.name },
      });
    });
    return provider.interactionResult(req, res, result, { mergeWithLastSubmission: details.prompt.name !== 'login' });
  }

  private async details(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails> {
    try {
      return await provider.interactionDetails(req, res);
    } catch {
      throw unauthorized(OIDC_REASONS.interactionNotFound, 'This sign-in request is unknown or has expired; start again from the application');
    }
  }

  private async build(tenant: Tenant): Promise<Provider> {
    const em = () => this.orm.em.fork() as EntityManager;
    const keys = await this.signingKeys.keysOf(em(), tenant.id);
    const tenantId = tenant.id;
    const slug = tenant.slug;
    const applications = this.applications;
    const cookieKey = Buffer.from(hkdfSync('sha256', this.config.jwtSecret, tenantId, 'oidc-provider cookies', 32)).toString('base64url');

    class TenantAdapter {
      constructor(private readonly model: string) {}
      async upsert(id: string, payload: payloads.OidcPayload, expiresIn?: number): Promise<void> {
        await payloads.upsertPayload(em(), tenantId, this.model, id, payload, expiresIn);
      }
      async find(id: string): Promise<payloads.OidcPayload | undefined> {
        if (this.model === 'Client') return (await applications.clientMetadata(em(), tenantId, id)) as payloads.OidcPayload | undefined;
        return payloads.findPayload(em(), tenantId, this.model, id);
      }
      async findByUid(uid: string): Promise<payloads.OidcPayload | undefined> {
        return payloads.findPayloadBy(em(), tenantId, this.model, 'uid', uid);
      }
      async findByUserCode(userCode: string): Promise<payloads.OidcPayload | undefined> {
        return payloads.findPayloadBy(em(), tenantId, this.model, 'user_code', userCode);
      }
      async consume(id: string): Promise<void> {
        await payloads.consumePayload(em(), tenantId, this.model, id);
      }
      async destroy(id: string): Promise<void> {
        await payloads.destroyPayload(em(), tenantId, this.model, id);
      }
      async revokeByGrantId(grantId: string): Promise<void> {
        await payloads.revokePayloadsOfGrant(em(), tenantId, grantId);
      }
    }

    const provider = new Provider(this.issuerOf(tenant), {
      adapter: TenantAdapter,
      jwks: { keys },
      cookies: {
        keys: [cookieKey],
        long: { signed: true, httpOnly: true, sameSite: 'lax' },
        short: { signed: true, httpOnly: true, sameSite: 'lax' },
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], [ORGANIZATIONS_SCOPE]: [ORGANIZATIONS_CLAIM] },
      scopes: ['openid', 'offline_access', 'email', API_SCOPE, ORGANIZATIONS_SCOPE],
      responseTypes: ['code'],
      clientDefaults: { id_token_signed_response_alg: SIGNING_ALG, grant_types: ['authorization_code'], response_types: ['code'] },
      enabledJWA: { idTokenSigningAlgValues: [SIGNING_ALG], userinfoSigningAlgValues: [SIGNING_ALG], introspectionSigningAlgValues: [SIGNING_ALG] },
      pkce: { required: (_ctx: unknown, client: { clientAuthMethod: string }) => client.clientAuthMethod === 'none' },
      ttl: OIDC_TTL,
      rotateRefreshToken: () => true,
      allowOmittingSingleRegisteredRedirectUri: false,
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: {
          enabled: true,
          // a resource server checking a token it was sent: any confidential client of the tenant
          allowedPolicy: async (_ctx: unknown, client: { clientAuthMethod: string }) => client.clientAuthMethod !== 'none',
        },
        revocation: { enabled: true },
        userinfo: { enabled: true },
        rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource },
        // JWT access tokens (RFC 9068) for the tenant's own APIs, named by `resource` (RFC 8707)
        resourceIndicators: {
          enabled: true,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx: unknown, resource: string) => {
            if (!(await applications.isTenantApi(em(), tenantId, resource))) throw new oidcErrors.InvalidTarget('resource is not an API of this workspace');
            return { scope: API_SCOPE, audience: resource, accessTokenTTL: OIDC_TTL.AccessToken, accessTokenFormat: 'jwt', jwt: { sign: { alg: SIGNING_ALG } } };
          },
        },
      },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/v1/${encodeURIComponent(slug)}/oidc${INTERACTION_PATH}${interaction.uid}` },
      loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
        const oidc = ctx.oidc as unknown as {
          result?: { consent?: { grantId?: string } };
          session: { grantIdFor(clientId: string): string | undefined; accountId?: string };
          client: { clientId: string };
          params: Record<string, unknown>;
        };
        const resources = resourcesOf(oidc.params);
        const grantId = oidc.result?.consent?.grantId ?? oidc.session.grantIdFor(oidc.client.clientId);
        const existing = grantId ? await provider.Grant.find(grantId) : undefined;
        if (existing) {
          if (resources.length === 0) return existing;
          grantAll(existing, resources);
          await existing.save();
          return existing;
        }
        if (!oidc.session.accountId) return undefined;
        // the tenant's own applications get the tenant's scopes without a consent page
        const grant = grantAll(new provider.Grant({ accountId: oidc.session.accountId, clientId: oidc.client.clientId }), resources);
        await grant.save();
        return grant;
      },
      findAccount: async (_ctx: unknown, sub: string) => {
        const user = await findActiveAccount(em(), tenantId, sub);
        if (!user) return undefined;
        return {
          accountId: user.id,
          claims: async (_use: string, scope: string) => ({
            sub: user.id, email: user.email, email_verified: user.emailVerifiedAt !== null,
            ...(await organizationsClaim(em(), tenantId, user.id, scope)),
          }),
        };
      },
      renderError: async (ctx: { type: string; body: unknown; status: number }, out: Record<string, unknown>) => {
        ctx.type = 'json';
        ctx.body = { error: out.error, error_description: out.error_description };
      },
    });
    provider.proxy = this.config.trustProxy !== false;
    provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
      const accountId = ctx.oidc.session?.accountId;
      if (accountId) void this.endHostedSessions(tenantId, accountId);
    });
    provider.on('server_error', (_ctx: unknown, err: unknown) => this.logger.error({ err, tenantId }, 'OpenID provider error'));
    return provider;
  }

  /**
   * RP-initiated logout ended the provider session: the hosted-page sessions that signed in end too,
   * and with them every provider session and grant of the user (SessionService.revokeSession).
   */
  private async endHostedSessions(tenantId: string, userId: string): Promise<void> {
    try {
      const em = this.orm.em.fork() as EntityManager;
      await em.transactional(async (tx) => {
        const sessionIds = await findHostedLoginSessionsOfUser(tx, tenantId, userId);
        for (const sessionId of sessionIds) await this.sessions.revokeSession(tx, tenantId, sessionId, 'logout', { type: 'user', id: userId }, { ip: null, userAgent: null });
      });
    } catch (err) {
      this.logger.error({ err, tenantId }, 'could not end the hosted sessions of an OpenID provider logout');
    }
  }
}

/**
 * The earliest sign-in time (seconds since the epoch) the application accepts, when it asked for a
 * new sign-in: `prompt=login` (newer than the interaction) or `max_age` (newer than now − max_age).
 */
function freshSignInAfter(details: InteractionDetails): number | undefined {
  if (details.prompt.name !== 'login') return undefined;
  const reasons = details.prompt.reasons;
  const now = Math.floor(Date.now() / 1000);
  if (reasons.includes('login_prompt')) return details.iat ?? now;
  if (reasons.includes('max_age')) {
    // oidc-provider keeps request parameters as sent: `max_age` arrives as a string (OpenID Connect Core 3.1.2.1)
    const maxAge = Number(details.params.max_age);
    if (Number.isInteger(maxAge) && maxAge >= 0) return now - maxAge;
    return details.iat ?? now;
  }
  return undefined;
}

/** The confirmation page of RP-initiated logout: one button, no script (the API's CSP allows none). */
async function logoutSource(ctx: { body: string }, form: string): Promise<void> {
  ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign out</title></head>
<body style="font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem"><h1>Sign out?</h1>${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes" style="font-size:1rem;padding:.5rem 1rem">Sign out</button></body></html>`;
}

/** The page after a logout without a registered `post_logout_redirect_uri`. */
async function postLogoutSuccessSource(ctx: { body: string }): Promise<void> {
  ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Signed out</title></head>
<body style="font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem"><h1>You are signed out</h1></body></html>`;
}
