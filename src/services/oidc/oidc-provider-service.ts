import { ORGANIZATIONS_CLAIM, ORGANIZATIONS_SCOPE, organizationsClaim } from '../organizations/organization-claims.js';
import { hkdfSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MikroORM } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import Provider, { errors as oidcErrors, type GrantInstance, type InteractionDetails, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import type { AccessControl, IndicatedResource } from './token-access.js';
import { NO_REQUEST_META, actingAs, userActor } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import type { SessionService } from '../sessions/session-service.js';
import type { Principal } from '../sessions/bearer-authentication-service.js';
import { SESSION_ERRORS } from '../../errors/session.js';
import { isSessionBinding } from '../../security/session-binding.js';
import type { ApplicationService } from './application-service.js';
import { OIDC_ERRORS } from '../../errors/oidc.js';
import { oidcStorageAdapterFactory } from './oidc-storage-adapter.js';
import type { Locale } from '../../lib/locales.js';
import { isUuid } from '../../lib/uuid.js';
import { errorPage, logoutPage, signedOutPage, uiLocaleOf, type PageRequest } from './provider-pages.js';
import { ID_TOKEN_SIGNING_ALG, SIGNING_ALG, SIGNING_ALGS, type SigningKeyService } from './signing-keys.js';
import { findActiveAccount } from '../../queries/user.js';
import { findHostedLoginSessionsOfUser, recordHostedLogin } from '../../queries/oidc-hosted-login.js';
import { findPermissionsOfMember } from '../../queries/organization-membership.js';
import { organizationIdOfAudience, registerRefreshTokenGrant } from './refresh-token-grant.js';
import { hasScope, scopeTokens } from '../../lib/oauth-scope.js';
import {
  asksForOrganizations, chooseOrganization, ORGANIZATION_REQUEST_PARAMETER, rememberSelectedOrganization, SELECTED_ORGANIZATION_CLAIM, selectedOrganizationClaim,
} from './organization-selection.js';

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

/** The OpenID scopes every application of a tenant may be granted (no consent page for first-party apps). */
const GRANTED_SCOPE = `openid email profile offline_access roles custom_data ${ORGANIZATIONS_SCOPE}`;
const OIDC_SCOPES = new Set(GRANTED_SCOPE.split(' '));

/** Every refresh rotates the refresh token; a used one is refused and ends the grant (docs/oidc.md "Tokens and claims"). */
const rotateRefreshToken = (): boolean => true;

/** The client authentication methods that work at the token, introspection and revocation endpoints (advertised in discovery). */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

/**
 * The scope an authorization request sent, before oidc-provider's check dropped `offline_access`
 * for want of `prompt=consent` (OpenID Connect Core 11): the query of a GET, the form of a POST.
 */
function sentScope(ctx: KoaContextWithOIDC): string | undefined {
  const body = (ctx.oidc as unknown as { body?: Record<string, unknown> }).body;
  const value = ctx.method === 'POST' ? body?.scope : ctx.query.scope;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Runs after oidc-provider's checks of an authorization request (its `extraParams` hook, on `scope`):
 * - gives back `offline_access` when the request asked for it with a code response type and the
 *   application may refresh: the tenant's own applications need no consent page, so no
 *   `prompt=consent` either (Core 11 allows "other conditions" for offline access);
 * - refuses `response_type=id_token` outside `response_mode=form_post` (Core 3.2 and OAuth 2.0
 *   Form Post Response Mode: the ID token is not left in a URL fragment).
 */
async function afterAuthorizationChecks(ctx: KoaContextWithOIDC): Promise<void> {
  const params = ctx.oidc.params as Record<string, unknown>;
  const responseType = typeof params.response_type === 'string' ? params.response_type : '';
  if (responseType === 'id_token' && params.response_mode !== 'form_post') {
    throw new oidcErrors.InvalidRequest('response_type=id_token requires response_mode=form_post');
  }
  const granted = scopeTokens(params.scope);
  const client = ctx.oidc.client;
  if (
    !granted.includes('offline_access') && responseType.split(' ').includes('code') && client?.grantTypeAllowed('refresh_token')
    && hasScope(sentScope(ctx), 'offline_access')
  ) {
    params.scope = [...granted, 'offline_access'].join(' ');
  }
}

/** An authorization request's `organization_id` (docs/oidc.md "Organization picker"), when sent, must be an organization id. */
async function checkRequestedOrganization(ctx: KoaContextWithOIDC, value: unknown): Promise<void> {
  if (value !== undefined && (typeof value !== 'string' || !isUuid(value))) throw new oidcErrors.InvalidRequest('organization_id must be an organization id');
}

/** The organization an application named in its authorization request, if any. */
function requestedOrganizationOf(details: InteractionDetails): string | undefined {
  const value = details.params[ORGANIZATION_REQUEST_PARAMETER];
  return typeof value === 'string' ? value : undefined;
}

/** The key of the interaction result that carries the organization chosen on the hosted page to the grant. */
const ORGANIZATION_RESULT_KEY = 'organization';

/** The `resource` values of an authorization request (RFC 8707: one or several). */
function resourcesOf(params: Record<string, unknown>): string[] {
  const value = params.resource;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Grants the tenant's OpenID scopes, and at each requested resource the requested scopes that are not
 * OpenID ones (the permissions asked for). What a token finally carries is narrowed to the holder's
 * roles when it is issued (getResourceServerInfo), so the grant itself decides nothing.
 */
function grantAll(grant: GrantInstance, resources: string[], scope: unknown): GrantInstance {
  grant.addOIDCScope(GRANTED_SCOPE);
  const asked = scopeTokens(scope).filter((s) => !OIDC_SCOPES.has(s));
  for (const resource of resources) if (asked.length) grant.addResourceScope(resource, asked.join(' '));
  return grant;
}

interface CachedProvider {
  provider: Provider;
  builtAt: number;
  tenantUpdatedAt: number;
}

/** What the hosted sign-in page learns about an application's pending sign-in (`GET interaction/{uid}/details`). */
export interface InteractionInfo {
  clientName: string;
  freshSignInRequired: boolean;
  notBefore: number;
  uiLocale: Locale | null;
  /** The application asked for scope `organizations`: a person in several picks one. */
  organizationsRequested: boolean;
  /** The organization the application named (`organization_id`), or null. */
  organizationId: string | null;
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
 * What a caller shows, beside its access token, that it holds the hosted session itself (docs/oidc.md
 * "Sign-in"): an access token alone, stolen from a page or a log, never finishes a sign-in.
 */
export interface SessionProof {
  /** The browser's `session_binding_{slug}` cookie (security/session-binding.ts), when it sent one. */
  bindingCookie: string | undefined;
  /** The session's current refresh token, which a client without the hosted pages sends in the body. */
  refreshToken: string | undefined;
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
    private readonly access: AccessControl,
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
   * What the hosted sign-in page needs to know about a pending interaction: the application's name,
   * whether it asked for a new sign-in (`prompt=login` or `max_age`), the first language of its
   * `ui_locales` the pages speak (OpenID Connect Core 3.1.2.1) or null, whether it asked for scope
   * `organizations` (the page then lets a person in several pick one) and the organization it named
   * (`organization_id`) or null.
   * @throws ApiError 401 `interaction_not_found` when the interaction is unknown, expired, or its
   *   cookie is not this browser's.
   */
  async interactionInfo(tenant: Tenant, req: IncomingMessage, res: ServerResponse): Promise<InteractionInfo> {
    const provider = await this.providerFor(tenant);
    const details = await this.details(provider, req, res);
    const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : '';
    const client = await this.applications.clientMetadata(this.orm.em.fork() as EntityManager, tenant.id, clientId);
    return {
      clientName: client?.client_name ?? clientId, freshSignInRequired: freshSignInAfter(details) !== undefined, notBefore: freshSignInAfter(details) ?? 0,
      uiLocale: uiLocaleOf(details.params.ui_locales) ?? null,
      organizationsRequested: asksForOrganizations(details.params.scope), organizationId: requestedOrganizationOf(details) ?? null,
    };
  }

  /**
   * The hosted session a request may finish an application's sign-in with (docs/oidc.md "Sign-in"):
   * a person's session (never an API key), proven beyond its access token by the browser's
   * session-binding cookie of that session or, without it, the session's current refresh token; with
   * when it last proved who the person is and how. One read (the session and, for a refresh token,
   * whether it is the current one); none before the proof is judged present.
   * @param principal the request's credential, already authenticated (the procedure pipeline).
   * @throws ApiError 401 `user_token_required` for an API key; 401 `session_proof_required` without a
   *   binding cookie of this session or the session's current refresh token; 401 `session_revoked`
   *   when the session ended since the credential check.
   */
  async hostedSessionOf(em: EntityManager, tenant: Pick<Tenant, 'id' | 'slug'>, principal: Principal, proof: SessionProof): Promise<HostedSession> {
    if (principal.kind !== 'user') throw SESSION_ERRORS.userTokenRequiredToFinishSignIn();
    const { sessionId, userId } = principal;
    const bound = isSessionBinding(this.config.jwtSecret, tenant.slug, sessionId, proof.bindingCookie);
    const presented = bound ? undefined : proof.refreshToken;
    if (!bound && presented === undefined) throw OIDC_ERRORS.sessionProofRequired();
    const session = await this.sessions.authenticationWithRefreshToken(em, tenant.id, sessionId, presented);
    if (!session) throw SESSION_ERRORS.sessionRevoked();
    if (!bound && !session.holdsRefreshToken) throw OIDC_ERRORS.sessionProofRequired();
    return { userId, sessionId, authenticatedAt: session.authenticatedAt, method: session.method };
  }

  /**
   * Finishes an application's pending sign-in with the person's hosted session (`POST
   * {issuer}/interaction/{uid}/complete`, docs/oidc.md "Sign-in"): {@link hostedSessionOf}, then
   * {@link completeInteraction} with the interaction of this browser (the provider's interaction
   * cookie on `req`).
   * @param pickedOrganizationId the organization the person picked on the hosted page, if any.
   * @returns the URL the browser goes to next (the provider's resume endpoint).
   * @throws ApiError the errors of {@link hostedSessionOf} and {@link completeInteraction}.
   */
  async finishSignIn(
    em: EntityManager, tenant: Tenant, principal: Principal, proof: SessionProof,
    req: IncomingMessage, res: ServerResponse, meta: RequestMeta, pickedOrganizationId?: string,
  ): Promise<string> {
    const session = await this.hostedSessionOf(em, tenant, principal, proof);
    return this.completeInteraction(tenant, session, req, res, meta, pickedOrganizationId);
  }

  /**
   * Completes a pending interaction with the hosted-page session the person holds: the login (user
   * id, the time the session last proved who they are, its method) and, when the application asked
   * for consent, the grant of the tenant's scopes (no consent page for the tenant's own apps).
   * When the application asked for scope `organizations`, the organization it continues with
   * (docs/oidc.md "Organization picker"): the one picked (`pickedOrganizationId`), the one the
   * application named, or the person's only one; it becomes the grant's `organization_id` claim.
   * Records which hosted session signed in, so RP-initiated logout ends it too. Audits `OidcSignIn`
   * (details `clientId`, `prompt`, and `organizationId` when one was chosen).
   * @returns the URL the browser goes to next (the provider's resume endpoint).
   * @throws ApiError 401 `interaction_not_found`, `fresh_sign_in_required` (the application asked
   *   for a sign-in newer than this session's); the organization errors of {@link chooseOrganization}.
   */
  async completeInteraction(
    tenant: Tenant, session: HostedSession, req: IncomingMessage, res: ServerResponse, meta: RequestMeta, pickedOrganizationId?: string,
  ): Promise<string> {
    const provider = await this.providerFor(tenant);
    const details = await this.details(provider, req, res);
    const notBefore = freshSignInAfter(details);
    const authTime = Math.floor(session.authenticatedAt.getTime() / 1000);
    if (notBefore !== undefined && authTime < notBefore) {
      throw OIDC_ERRORS.freshSignInRequired();
    }
    const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : '';
    const organizationId = await chooseOrganization(
      this.orm.em.fork() as EntityManager, tenant.id, session.userId, details.params.scope, requestedOrganizationOf(details), pickedOrganizationId,
    );
    let result: Record<string, unknown>;
    if (details.prompt.name === 'login') {
      result = { login: { accountId: session.userId, ts: authTime, amr: session.method ? [session.method] : undefined, remember: true } };
    } else {
      if (details.session?.accountId !== session.userId) throw OIDC_ERRORS.interactionOfAnotherAccount();
      // the grant the authorization already holds (made after the login step, or an earlier
      // sign-in's) is extended, not doubled by a second row for the same person and application
      const held = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
      const current = held && held.accountId === session.userId && held.clientId === clientId ? held : new provider.Grant({ accountId: session.userId, clientId });
      const grant = grantAll(current, resourcesOf(details.params), details.params.scope);
      result = { consent: { grantId: await grant.save() } };
    }
    const em = this.orm.em.fork() as EntityManager;
    await em.transactional(async (tx) => {
      await recordHostedLogin(tx, tenant.id, session.userId, session.sessionId, clientId);
      await this.audit.record(actingAs({ em: tx, tenant, meta }, session.userId), {
        action: 'OidcSignIn', target: { type: 'user', id: session.userId },
        details: { clientId, prompt: details.prompt.name, ...(organizationId ? { organizationId } : {}) },
      });
    });
    if (organizationId) result[ORGANIZATION_RESULT_KEY] = { id: organizationId };
    return provider.interactionResult(req, res, result, { mergeWithLastSubmission: details.prompt.name !== 'login' });
  }

  private async details(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails> {
    try {
      return await provider.interactionDetails(req, res);
    } catch {
      throw OIDC_ERRORS.interactionNotFound();
    }
  }

  private async build(tenant: Tenant): Promise<Provider> {
    const em = () => this.orm.em.fork() as EntityManager;
    const keys = await this.signingKeys.keysOf(em(), tenant.id);
    const tenantId = tenant.id;
    const slug = tenant.slug;
    const { apiResources, roleAssignments } = this.access;
    /**
     * The API resource an RFC 8707 `resource` value names and the permissions a token for it may carry
     * in this request (docs/oidc.md "Roles and permissions", "When a change applies"): at the token
     * endpoint those the roles of the m2m application (client_credentials, narrowed to the scope it
     * asked for) or of the user grant, read afresh for every token in one statement; at the
     * authorization endpoint every permission of the resource (nothing is issued there, the grant
     * only records what was asked). Undefined when the tenant has no such resource.
     */
    const resourceGrant = async (ctx: KoaContextWithOIDC, resource: string, clientId: string): Promise<IndicatedResource | undefined> => {
      const oidc = ctx.oidc as unknown as { route?: string; params?: { grant_type?: unknown; scope?: unknown }; account?: { accountId: string } };
      if (oidc.params?.grant_type === 'client_credentials') {
        const asked = scopeTokens(oidc.params.scope);
        return roleAssignments.grantFor(em(), tenantId, resource, { clientId }, asked);
      }
      if (oidc.account) return roleAssignments.grantFor(em(), tenantId, resource, { userId: oidc.account.accountId });
      const found = await apiResources.forIndicator(em(), tenantId, resource);
      return found && (oidc.route === 'authorization' || oidc.route === 'resume' ? found : { ...found, permissions: [] });
    };
    const cookieKey = Buffer.from(hkdfSync('sha256', this.config.jwtSecret, tenantId, 'oidc-provider cookies', 32)).toString('base64url');
    const issuer = this.issuerOf(tenant);
    // the provider session cookie belongs to this tenant's issuer path (two tenants on one host keep
    // their own single sign-on); SameSite=None (with Secure) where the public URL is https, so a
    // relying party on another site can renew in an iframe (prompt=none)
    const cookiePath = new URL(issuer).pathname;
    const crossSite = new URL(this.config.publicUrl).protocol === 'https:';
    const pageTenant = { name: tenant.name, displayName: tenant.displayName, primaryColor: tenant.primaryColor, defaultLocale: tenant.defaultLocale };
    const pageRequest = (ctx: KoaContextWithOIDC): PageRequest => ({
      uiLocales: (ctx.oidc?.params as Record<string, unknown> | undefined)?.ui_locales,
      acceptLanguage: ctx.get('accept-language') || undefined,
    });

    /** The grant an authorization continues with: the consented or session's one, else a new one with the tenant's scopes. */
    const loadGrant = async (ctx: KoaContextWithOIDC): Promise<GrantInstance | undefined> => {
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
        grantAll(existing, resources, oidc.params.scope);
        await existing.save();
        return existing;
      }
      if (!oidc.session.accountId) return undefined;
      // the tenant's own applications get the tenant's scopes without a consent page
      const grant = grantAll(new provider.Grant({ accountId: oidc.session.accountId, clientId: oidc.client.clientId }), resources, oidc.params.scope);
      await grant.save();
      return grant;
    };
    const provider = new Provider(issuer, {
      // the tenant's storage (src/services/oidc/oidc-storage-adapter.ts): oidc_payload rows, and its applications as clients
      adapter: oidcStorageAdapterFactory({ tenantId, em, clientMetadata: (db, id, clientId) => this.applications.clientMetadata(db, id, clientId) }),
      jwks: { keys },
      cookies: {
        keys: [cookieKey],
        long: { signed: true, httpOnly: true, sameSite: crossSite ? 'none' : 'lax', secure: crossSite, path: cookiePath },
        short: { signed: true, httpOnly: true, sameSite: 'lax' },
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'], roles: ['roles'], custom_data: ['custom_data'], [ORGANIZATIONS_SCOPE]: [ORGANIZATIONS_CLAIM, SELECTED_ORGANIZATION_CLAIM] },
      // the ID token carries the claims of the scopes asked (`email`, `profile`, `roles`, `custom_data`), with or without an access token for userinfo
      conformIdTokenClaims: false,
      scopes: ['openid', 'offline_access', 'email', 'profile', 'roles', 'custom_data', ORGANIZATIONS_SCOPE],
      responseTypes: ['code', 'id_token'],
      extraParams: { scope: afterAuthorizationChecks, [ORGANIZATION_REQUEST_PARAMETER]: checkRequestedOrganization },
      clientAuthMethods: CLIENT_AUTH_METHODS,
      clientDefaults: { id_token_signed_response_alg: ID_TOKEN_SIGNING_ALG, grant_types: ['authorization_code'], response_types: ['code'] },
      enabledJWA: { idTokenSigningAlgValues: [...SIGNING_ALGS], userinfoSigningAlgValues: [...SIGNING_ALGS], introspectionSigningAlgValues: [...SIGNING_ALGS] },
      pkce: { required: (_ctx: unknown, client: { clientAuthMethod: string }) => client.clientAuthMethod === 'none' },
      ttl: OIDC_TTL,
      rotateRefreshToken,
      // an organization token (issued by refresh-token-grant.ts, `aud` urn:organization:{id}) names its organization
      extraTokenClaims: async (_ctx: unknown, token: { resourceServer?: { audience?: string } }) => {
        const organizationId = organizationIdOfAudience(token.resourceServer?.audience);
        return organizationId ? { organization_id: organizationId } : undefined;
      },
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
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
            ctx.body = logoutPage(pageTenant, pageRequest(ctx), form);
          },
          postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
            ctx.body = signedOutPage(pageTenant, pageRequest(ctx));
          },
        },
        // JWT access tokens (RFC 9068) for the tenant's own APIs, named by `resource` (RFC 8707)
        resourceIndicators: {
          enabled: true,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (ctx: KoaContextWithOIDC, resource: string, client: { clientId: string }) => {
            const found = await resourceGrant(ctx, resource, client.clientId);
            if (!found) throw new oidcErrors.InvalidTarget('resource is not an API of this workspace');
            const scope = found.permissions.join(' ');
            return { scope, audience: resource, accessTokenTTL: OIDC_TTL.AccessToken, accessTokenFormat: 'jwt', jwt: { sign: { alg: SIGNING_ALG } } };
          },
        },
      },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/v1/${encodeURIComponent(slug)}/oidc${INTERACTION_PATH}${interaction.uid}` },
      loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
        const grant = await loadGrant(ctx);
        // the organization picked on the hosted page (completeInteraction) becomes the grant's
        const picked = (ctx.oidc as unknown as { result?: Record<string, { id?: unknown } | undefined> }).result?.[ORGANIZATION_RESULT_KEY]?.id;
        if (grant && typeof picked === 'string') await rememberSelectedOrganization(em(), tenantId, grant, picked, OIDC_TTL.Grant);
        return grant;
      },
      findAccount: async (ctx: KoaContextWithOIDC, sub: string, token?: { grantId?: string }) => {
        const user = await findActiveAccount(em(), tenantId, sub);
        if (!user) return undefined;
        return {
          accountId: user.id,
          claims: async (_use: string, scope: string) => ({
            sub: user.id, email: user.email, email_verified: user.emailVerifiedAt !== null,
            ...(hasScope(scope, 'roles') ? { roles: await roleAssignments.roleNamesOfUser(em(), tenantId, user.id) } : {}),
            custom_data: user.customData,
            // OpenID Connect Core 5.1: a claim the person has not set is left out, not sent as null
            ...(user.name === null ? {} : { name: user.name }),
            ...(user.picture === null ? {} : { picture: user.picture }),
            ...(await organizationsClaim(em(), tenantId, user.id, scope)),
            // the code, refresh or access token's grant; at the authorization endpoint (id_token) the request's
            ...(await selectedOrganizationClaim(em(), tenantId, token?.grantId ?? (ctx.oidc?.entities?.Grant as GrantInstance | undefined)?.jti, user.id, scope)),
          }),
        };
      },
      // an error the provider cannot send back to the application, shown in the person's browser
      renderError: async (ctx: KoaContextWithOIDC, out: Record<string, unknown>) => {
        ctx.type = 'html';
        ctx.body = errorPage(pageTenant, pageRequest(ctx), out.error, out.error_description);
      },
    });
    // `grant_type=refresh_token` with `organization_id`: an organization token (docs/oidc.md "Organization tokens")
    registerRefreshTokenGrant(provider, {
      requiredScope: ORGANIZATIONS_SCOPE,
      memberPermissions: (organizationId, accountId) => findPermissionsOfMember(em(), tenantId, organizationId, accountId),
      rotateRefreshToken,
      accessTokenTTL: OIDC_TTL.AccessToken,
      signingAlg: SIGNING_ALG,
    });
    // the router pins X-Forwarded-Host/-Proto/-For to PUBLIC_URL and the client address Express
    // resolved (src/rest/oidc-routes.ts), so URLs never follow the request's Host header
    provider.proxy = true;
    // `id_token` + form_post web applications registered with http on a loopback host (local
    // development; the applications API allows http nowhere else): oidc-provider's documented opt-out
    // of its https-only and no-localhost rules for implicit web clients
    const schema = provider.Client.Schema.prototype;
    const invalidate = schema.invalidate;
    schema.invalidate = function allowLoopbackImplicit(this: unknown, message: string, code?: string) {
      if (code === 'implicit-force-https' || code === 'implicit-forbid-localhost') return;
      invalidate.call(this, message, code);
    };
    // a page with oidc-provider's auto-submit script (form_post) got that script's SHA-256 added to
    // the router's `script-src 'none'`: drop the 'none', which may not stand beside a source
    provider.use(async (ctx, next) => {
      await next();
      const csp = ctx.response.get('content-security-policy');
      if (csp && /script-src 'none' 'sha256-/.test(csp)) ctx.set('content-security-policy', csp.replace("script-src 'none' ", 'script-src '));
    });
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
        for (const sessionId of sessionIds) await this.sessions.revokeSession({ em: tx, tenant: { id: tenantId }, actor: userActor(userId), meta: NO_REQUEST_META }, sessionId, 'logout');
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
