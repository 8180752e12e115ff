import { newUser } from '../../entities/new-user.js';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { emailAddress, normalizeEmail } from '../../lib/email.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { actingAs, asSystem, withEm, type RequestScope, type TenantScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import { constantTimeEqual, sha256Hex } from '../../security/tokens.js';
import { issuerProblem } from './idp-outbound.js';
import type { AuditService } from '../audit/audit-service.js';
import type { PasswordSignInService, SignIn } from '../sign-in/password-sign-in-service.js';
import type { MfaChallengeService } from '../sign-in/mfa-challenge-service.js';
import type { MfaService } from '../mfa/mfa-service.js';
import type { IdpClientCredentials, IdpIdentityClaims, IdpProviderClient } from './idp-provider-client.js';
import type { SessionService } from '../sessions/session-service.js';
import {
  findLiveUserByEmail, findLiveUserById, findUserById, findUserEmail, insertUser, setEmailVerifiedByProvider,
} from '../../queries/user.js';
import { isTotpEnrolled } from '../mfa/totp-service.js';
import { countPasskeysOfUser } from '../../queries/passkey.js';
import { refuseSuspended } from '../account-policy/sign-in-eligibility.js';
import { assertMaySignUp } from '../account-policy/signup-policy.js';
import type { AccountCredentialService } from '../lifecycle/account-credentials.js';
import { assertRecentSignIn } from '../mfa/mfa-enrollment-service.js';
import type { IssuerChangeNotifier } from './issuer-change-notice.js';
import {
  consumeAuthRequest, deleteAuthRequestsExpiredBefore, deleteAuthRequestsOfTenant, findAuthRequestState, insertAuthRequest, type ConsumedAuthRequest,
} from '../../queries/idp-auth-request.js';
import { deleteIdentity, insertIdentity, lockIdentity, touchIdentityLogin } from '../../queries/idp-identity.js';
import { clearIdpCredentials, updateTenant } from '../../queries/tenant.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';
import { IDP_ERRORS, IDP_REASONS } from '../../errors/idp.js';
import { MFA_ERRORS } from '../../errors/mfa.js';

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

/** The whole of the tenant's provider settings (GET tenant; docs/idp.md "A provider per tenant"). */
export interface IdpFullSettingsView extends IdpSettingsView {
  /** The issuer sign-ins use: the tenant's own, or the deployment's `IDP_ISSUER`. */
  idpIssuer: string;
  /** True when the tenant set no issuer of its own and `IDP_ISSUER` applies. */
  idpIssuerIsDefault: boolean;
  /** Lower-case email domains a provider sign-in must come from; empty: any. */
  idpAllowedEmailDomains: string[];
  /** The redirect URI to register at the provider, exactly as `oauth/idp/start` sends it. */
  idpRedirectUri: string;
}

/** What `PUT oauth/idp/credentials` sets (docs/idp.md). */
/** Who changes the provider settings: a signed-in user (with its session) or an API key. */
export type IdpSettingsChanger = { kind: 'user'; userId: string; sessionId: string } | { kind: 'api_key'; apiKeyId: string };

export interface IdpCredentialsInput {
  clientId: string;
  clientSecret: string;
  /** The tenant's own OpenID provider; omitted: the deployment's `IDP_ISSUER`. */
  issuer?: string | undefined;
  /** Lower-case domain names; omitted or empty: any. */
  allowedEmailDomains?: string[] | undefined;
}

/**
 * RFC 8176 method references by factor category. A provider sign-in counts as multi-factor when
 * its `amr` holds `mfa`, or methods of two different categories (e.g. `pwd` and `otp`).
 */
const AMR_CATEGORIES: Readonly<Record<string, 'knowledge' | 'possession' | 'inherence'>> = {
  pwd: 'knowledge', pin: 'knowledge', kba: 'knowledge',
  otp: 'possession', hwk: 'possession', swk: 'possession', sms: 'possession', tel: 'possession', sc: 'possession', pop: 'possession',
  face: 'inherence', fpt: 'inherence', iris: 'inherence', retina: 'inherence', vbm: 'inherence',
};

/** True when the ID token's `amr` shows the provider itself did multi-factor authentication. */
export function providerDidMfa(amr: readonly string[]): boolean {
  if (amr.includes('mfa')) return true;
  const categories = new Set(amr.map((method) => AMR_CATEGORIES[method]).filter((category) => category !== undefined));
  return categories.size >= 2;
}

/** True when two issuer identifiers name the same issuer (equal, or equal as normalised URLs). */
function sameIssuer(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

const storedSecrets = z.object({ codeVerifier: z.string().min(1), nonce: z.string().min(1) });
const validEmail = emailAddress;

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
 * The settings take the request scope and audit with its actor; the callback takes the workspace's
 * TenantScope and audits as the person signing in (actingAs), a refusal or the removal of a
 * pre-registration's credentials as `system`.
 */
export class IdpService {
  constructor(
    private readonly config: Config,
    private readonly keyring: Keyring,
    private readonly provider: IdpProviderClient,
    private readonly auth: PasswordSignInService,
    private readonly mfa: MfaService,
    private readonly challenges: MfaChallengeService,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly credentials: AccountCredentialService,
    private readonly issuerNotices: IssuerChangeNotifier,
  ) {}

  /** `${PUBLIC_URL}/v1/<slug>/oauth/idp/callback`: the redirect URI registered at the provider. */
  redirectUri(tenant: Tenant): string {
    return `${this.config.publicUrl}/v1/${encodeURIComponent(tenant.slug)}/oauth/idp/callback`;
  }

  /** The issuer the tenant's sign-ins use: its own (`PUT oauth/idp/credentials` `issuer`) or `IDP_ISSUER`. */
  effectiveIssuer(tenant: Tenant): string {
    return tenant.idpIssuer ?? this.config.idpIssuer;
  }

  /** Every provider setting of the tenant as GET tenant shows it; never the secret. */
  settingsView(tenant: Tenant): IdpFullSettingsView {
    return {
      ...idpSettingsView(tenant),
      idpIssuer: this.effectiveIssuer(tenant),
      idpIssuerIsDefault: tenant.idpIssuer === null,
      idpAllowedEmailDomains: tenant.idpAllowedEmailDomains ?? [],
      idpRedirectUri: this.redirectUri(tenant),
    };
  }

  /**
   * Sets (or replaces) the tenant's provider configuration: client id and secret (the secret stored
   * only as keyring ciphertext), its own issuer (or none: `IDP_ISSUER`) and the allowed email domains
   * (or none: any). An issuer is checked first (docs/idp.md "A provider per tenant"): URL rules, then
   * OpenID discovery right now; on any failure nothing is saved. The issuer is stored as the discovery
   * document spells it. Audits `IdpOauthLinked` with the scope's actor and metadata (details: client
   * id, issuer, domains, redirect URI; never the secret).
   * @param by the credential making the change (the scope's actor), for the rules of an issuer change.
   * @throws ApiError 400 `invalid_issuer`, `idp_issuer_not_allowed`, `idp_discovery_failed`, `issuer_mismatch`.
   */
  async putCredentials(scope: RequestScope, input: IdpCredentialsInput, by: IdpSettingsChanger): Promise<void> {
    const { em, tenant } = scope;
    const previousIssuer = this.effectiveIssuer(tenant);
    const changesIssuer = (input.issuer ?? this.config.idpIssuer) !== previousIssuer;
    let changedBy: string | null = null;
    if (changesIssuer) changedBy = await this.assertMayChangeIssuer(em, tenant, by);
    let issuer: string | null = null;
    if (input.issuer !== undefined) {
      // The operator's own IDP_ISSUER, named explicitly, follows its own (config) rules.
      const problem = input.issuer === this.config.idpIssuer ? undefined : issuerProblem(input.issuer, this.config.idpAllowPrivateIssuers);
      if (problem) throw problem.reason === IDP_REASONS.invalidIssuer ? IDP_ERRORS.invalidIssuer({ problem: problem.message }) : IDP_ERRORS.issuerUrlNotAllowed({ problem: problem.message });
      issuer = await this.provider.verifyIssuer(input.issuer);
    }
    const domains = input.allowedEmailDomains && input.allowedEmailDomains.length > 0 ? [...new Set(input.allowedEmailDomains)] : null;
    const secretEnc = this.keyring.encrypt(input.clientSecret, idpClientSecretAssociatedData(tenant.id));
    await em.transactional(async (tx) => {
      await updateTenant(tx, tenant.id, {
        idpClientId: input.clientId,
        idpClientSecretEnc: secretEnc,
        idpIssuer: issuer,
        idpAllowedEmailDomains: domains,
        updatedAt: new Date(),
      });
      // A sign-in in progress against the previous provider cannot complete against the new one.
      if ((issuer ?? this.config.idpIssuer) !== previousIssuer) {
        await deleteAuthRequestsOfTenant(tx, tenant.id);
      }
      await this.audit.record(withEm(scope, tx), {
        action: 'IdpOauthLinked',
        target: { type: 'tenant', id: tenant.id },
        details: {
          clientId: input.clientId,
          replaced: tenant.idpClientId !== null,
          redirectUri: this.redirectUri(tenant),
          issuer: issuer ?? this.config.idpIssuer,
          issuerIsDefault: issuer === null,
          allowedEmailDomains: domains ?? [],
          issuerChanged: (issuer ?? this.config.idpIssuer) !== previousIssuer,
          previousIssuer,
        },
      });
      const newIssuer = issuer ?? this.config.idpIssuer;
      if (newIssuer !== previousIssuer && changedBy !== null) {
        await this.issuerNotices.notifyAdmins(tx, tenant, previousIssuer, newIssuer, changedBy);
      }
    });
  }

  /**
   * Who may change the tenant's issuer (docs/idp.md "A provider per tenant"): whoever picks the
   * issuer decides who provider sign-in lets in, so only a signed-in Admin with a recent sign-in
   * (docs/mfa.md "Recent sign-in"), never an API key.
   * @returns the Admin's email, for the notice to the tenant's Admins.
   * @throws ApiError 403 `admin_session_required` for an API key, 401 `reauthentication_required`.
   */
  private async assertMayChangeIssuer(em: EntityManager, tenant: Tenant, by: IdpSettingsChanger): Promise<string> {
    if (by.kind !== 'user') {
      throw IDP_ERRORS.adminSessionRequired();
    }
    await assertRecentSignIn(em, tenant, { userId: by.userId, sessionId: by.sessionId });
    return (await findUserEmail(em, tenant.id, by.userId)) ?? 'an administrator';
  }

  /**
   * Removes the tenant's client id and secret, which turns the sign-in off; flows already started
   * can no longer complete. Users' provider links are kept for when credentials are set again.
   * Audits `IdpOauthUnlinked` (by the scope's actor) when something was removed; idempotent otherwise.
   */
  async deleteCredentials(scope: RequestScope): Promise<void> {
    const { tenant } = scope;
    await scope.em.transactional(async (tx) => {
      const cleared = await clearIdpCredentials(tx, tenant.id, new Date());
      await deleteAuthRequestsOfTenant(tx, tenant.id);
      if (!cleared) return;
      await this.audit.record(withEm(scope, tx), { action: 'IdpOauthUnlinked', target: { type: 'tenant', id: tenant.id }, details: { clientId: tenant.idpClientId } });
    });
  }

  /**
   * Starts a sign-in: a single-use authorization request (hashed `state`, encrypted `nonce` and PKCE
   * verifier, valid {@link IDP_AUTH_REQUEST_TTL_SECONDS}) and the provider URL to send the browser to.
   * @param browserBinding the random value the hosted pages keep in the browser's binding cookie
   *   (docs/web.md "Sign-in with the identity provider"); only its SHA-256 is stored, and the callback
   *   then requires the same value. Omitted by API clients (an unbound request).
   * @returns the authorization URL.
   * @throws ApiError 400 `idp_not_configured`, 400 `idp_unavailable`.
   */
  async start(em: EntityManager, tenant: Tenant, browserBinding?: string, linkUserId?: string): Promise<string> {
    const credentials = this.credentialsOf(tenant);
    const issuer = this.effectiveIssuer(tenant);
    const request = await this.provider.authorizationRequest(issuer, credentials, this.redirectUri(tenant));
    const now = new Date();
    const id = randomUUID();
    const secretsEnc = this.keyring.encrypt(
      JSON.stringify({ codeVerifier: request.codeVerifier, nonce: request.nonce }),
      authRequestAssociatedData(tenant.id, id),
    );
    await deleteAuthRequestsExpiredBefore(em, tenant.id, new Date(now.getTime() - IDP_AUTH_REQUEST_RETENTION_SECONDS * 1000));
    await insertAuthRequest(em, {
      id,
      tenantId: tenant.id,
      stateHash: sha256Hex(request.state),
      secretsEnc,
      issuer,
      createdAt: now,
      expiresAt: new Date(now.getTime() + IDP_AUTH_REQUEST_TTL_SECONDS * 1000),
      consumedAt: null,
      browserBindingHash: browserBinding === undefined ? null : sha256Hex(browserBinding),
      linkUserId: linkUserId ?? null,
    });
    return request.authorizationUrl;
  }

  /**
   * `POST me/idp/link` (docs/idp.md "Linking an existing account"): the signed-in user starts a
   * provider sign-in whose callback links the provider identity to this user, which is the account's
   * own proof that an email match alone never gives. Needs a recent sign-in (docs/mfa.md "Recent
   * sign-in"). The callback accepts only a provider identity whose verified email is the user's own.
   * @returns the provider's authorization URL.
   * @throws ApiError 401 `reauthentication_required`, 400 `idp_not_configured` / `idp_unavailable`.
   */
  async startLink(em: EntityManager, tenant: Tenant, session: { userId: string; sessionId: string }): Promise<string> {
    await assertRecentSignIn(em, tenant, session);
    return this.start(em, tenant, undefined, session.userId);
  }

  /**
   * Completes a sign-in (OIDC Core §3.1.2.5–3.1.3.7): spends the state, exchanges the code, verifies
   * the ID token, then resolves the user (docs/idp.md "Who is signed in"): the user linked to the provider
   * subject; or the live user with the same provider-verified email, linked (`IdpOauthLinked`) — when
   * that account's email was never verified, the provider identity takes it over and everything of
   * the pre-registration (password, factors, pending secrets, codes, mailed tokens, sessions) is
   * removed first; or a new Active Member. A soft-deleted user is never revived. Then the tenant's
   * MFA policy applies as at password login: it is satisfied by an `amr` showing multi-factor
   * authentication at the provider, otherwise the answer is 401 `mfa_required` with
   * `details.methods` and a single-use `details.mfaToken` for `auth/mfa/complete`. Audits `UserLogin`
   * (method `idp`) and `SessionCreated` when a session starts.
   * @throws ApiError 401 `idp_error` (the provider sent `error`), 400 `invalid_state` / `state_reused`
   *   / `state_expired`, 400 `missing_code`, 400 `idp_not_configured`, 400 `idp_unavailable`,
   *   401 `issuer_mismatch`, 401 `code_exchange_failed`, 401 `id_token_invalid`, 401
   *   `idp_email_domain_not_allowed` (audited `UserLoginFailed`), 401 `idp_email_missing` /
   *   `idp_email_unverified`, 401 `user_suspended`, 401 `mfa_required`, 401 `browser_mismatch` (the
   *   request was started by the hosted pages in a browser and `presentedBinding` is missing or is not
   *   that browser's binding value; the state is spent all the same).
   * @param presentedBinding the value of the browser-binding cookie sent with the callback, if any.
   */
  async callback(scope: TenantScope, params: IdpCallbackParams, presentedBinding?: string, requireBinding = false): Promise<SignIn> {
    const { em, tenant } = scope;
    if (params.error !== undefined) {
      if (params.state !== undefined) await this.consumeRequest(em, tenant, params.state).catch(() => undefined);
      throw IDP_ERRORS.providerError({ error: params.error, errorDescription: params.error_description });
    }
    if (params.state === undefined) throw IDP_ERRORS.stateMissing();
    const request = await this.consumeRequest(em, tenant, params.state);
    // the hosted pages complete only flows this browser started (no login CSRF with an API client's state)
    if (requireBinding && request.browserBindingHash === null) {
      throw IDP_ERRORS.browserNotBound();
    }
    if (request.browserBindingHash !== null) {
      const bound = presentedBinding !== undefined && constantTimeEqual(sha256Hex(presentedBinding), request.browserBindingHash);
      if (!bound) throw IDP_ERRORS.browserMismatch();
    }
    if (params.code === undefined) throw IDP_ERRORS.missingCode();
    const credentials = this.credentialsOf(tenant);
    if (request.issuer !== this.effectiveIssuer(tenant)) {
      throw IDP_ERRORS.stateOfAnotherProvider();
    }
    const secrets = storedSecrets.parse(
      JSON.parse(this.keyring.decrypt(request.secretsEnc, authRequestAssociatedData(tenant.id, request.id))),
    );
    const identity = await this.provider.exchangeCode(
      request.issuer,
      credentials,
      this.redirectUri(tenant),
      { code: params.code, state: params.state, iss: params.iss },
      secrets,
    );
    // openid-client verified `iss` against the document discovered for request.issuer; this also pins
    // it to the issuer the tenant's request was started against (URL-normalised: a trailing slash).
    if (!sameIssuer(identity.issuer, request.issuer)) {
      throw IDP_ERRORS.idTokenIssuerMismatch();
    }
    await this.checkEmailDomain(scope, identity);
    let user: User;
    try {
      user = await this.resolveIdentity(scope, identity, request.linkUserId);
    } catch (err) {
      // Two first sign-ins of the same person at once: the loser finds the winner's link on retry.
      if (!isUniqueViolation(err)) throw err;
      user = await this.resolveIdentity(scope, identity, request.linkUserId);
    }
    if (this.mfa.requiredMethods(tenant, user).length > 0 && !this.providerMfaAccepted(tenant, user, identity.amr)) {
      const challenge = await this.challenges.issue(em, tenant, user, 'idp', identity.issuer);
      throw MFA_ERRORS.mfaRequiredAfterProvider(challenge);
    }
    const tokens = await this.auth.completeSignIn(scope, user, 'idp', {
      issuer: identity.issuer,
      ...(identity.amr.length > 0 ? { amr: identity.amr, providerMfa: providerDidMfa(identity.amr) } : {}),
    });
    return { user, tokens };
  }

  /**
   * Whether the provider's `amr` satisfies the tenant's MFA policy for `user` (docs/idp.md "MFA"):
   * it must show multi-factor authentication, and a factor the user enrolled here (TOTP) is waived
   * by it only when the tenant opted in (`idpMfaTrust`, default off), since the tenant, not the user,
   * chose the provider.
   */
  private providerMfaAccepted(tenant: Tenant, user: User, amr: readonly string[]): boolean {
    if (!providerDidMfa(amr)) return false;
    return tenant.idpMfaTrust || !isTotpEnrolled(user);
  }

  /**
   * When the tenant restricts sign-ins to email domains, requires the provider-verified email to be
   * of one of them (exact domain, lower-cased; a subdomain is another domain). Audits `UserLoginFailed`.
   * @throws ApiError 401 `idp_email_domain_not_allowed` (also when the provider shares no verified email).
   */
  private async checkEmailDomain(scope: TenantScope, identity: IdpIdentityClaims): Promise<void> {
    const allowed = scope.tenant.idpAllowedEmailDomains ?? [];
    if (allowed.length === 0) return;
    const email = this.verifiedEmailOf(identity);
    const domain = email === null ? null : email.slice(email.lastIndexOf('@') + 1);
    if (domain !== null && allowed.includes(domain)) return;
    await this.audit.record(asSystem(scope), {
      action: 'UserLoginFailed', details: { method: 'idp', reason: 'idp_email_domain_not_allowed', issuer: identity.issuer, emailDomain: domain },
    });
    throw IDP_ERRORS.emailDomainNotAllowed();
  }

  /** The tenant's decrypted client credentials. @throws ApiError 400 `idp_not_configured`. */
  private credentialsOf(tenant: Tenant): IdpClientCredentials {
    if (tenant.idpClientId === null || tenant.idpClientSecretEnc === null) {
      throw IDP_ERRORS.notConfigured();
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
  private async consumeRequest(em: EntityManager, tenant: Tenant, state: string): Promise<ConsumedAuthRequest> {
    const now = new Date();
    const stateHash = sha256Hex(state);
    const row = await consumeAuthRequest(em, tenant.id, stateHash, now);
    if (row) return row;
    const known = await findAuthRequestState(em, tenant.id, stateHash);
    if (!known) throw IDP_ERRORS.invalidState();
    if (known.consumedAt) throw IDP_ERRORS.stateReused();
    throw IDP_ERRORS.stateExpired();
  }

  /**
   * Resolves the provider identity to a user, in one transaction (docs/idp.md "Who is signed in"):
   * the user already linked to it; else, in a link flow (`linkUserId`, started by that signed-in
   * user), that user, when the provider-verified email is the user's own; else a new Member, or the
   * account with that email when it was never verified, which the provider identity takes over
   * ({@link reclaimUnverified}). A verified account is never linked by email alone: 401
   * `idp_link_required` (its owner links from a signed-in session, `me/idp/link`).
   * @throws ApiError 401 `idp_email_missing` / `idp_email_unverified` / `idp_link_required` /
   *   `idp_link_email_mismatch` / `user_suspended` / `email_not_verified`, 409 `idp_identity_linked_elsewhere`.
   */
  private async resolveIdentity(scope: TenantScope, identity: IdpIdentityClaims, linkUserId: string | null): Promise<User> {
    let unlinkedAccount: string | null = null;
    try {
      return await this.resolveIdentityIn(scope, identity, linkUserId, (userId) => (unlinkedAccount = userId));
    } catch (err) {
      // recorded after the transaction rolled back, so the refusal stays in the audit log
      if (unlinkedAccount !== null) {
        await this.audit.record(asSystem(scope), {
          action: 'UserLoginFailed', target: { type: 'user', id: unlinkedAccount }, details: { method: 'idp', reason: 'idp_link_required', issuer: identity.issuer },
        });
      }
      throw err;
    }
  }

  /** {@link resolveIdentity}'s transaction; `onLinkRequired` is told the verified account an email match refused. */
  private async resolveIdentityIn(
    scope: TenantScope, identity: IdpIdentityClaims, linkUserId: string | null, onLinkRequired: (userId: string) => void,
  ): Promise<User> {
    const { tenant } = scope;
    return scope.em.transactional(async (tx) => {
      const inTx = withEm(scope, tx);
      const now = new Date();
      const email = this.verifiedEmailOf(identity);
      let user = await this.linkedUser(tx, tenant, identity);
      let via: 'verified_email' | 'new_user' | 'reclaimed_unverified_account' | 'signed_in_user' | null = null;
      if (linkUserId !== null) {
        if (user && user.id !== linkUserId) {
          throw IDP_ERRORS.identityLinkedElsewhere();
        }
        const linking = await findLiveUserById(tx, tenant.id, linkUserId);
        if (!linking) throw IDP_ERRORS.linkingAccountGone();
        if (email === null || email !== linking.email) {
          throw IDP_ERRORS.linkEmailMismatch();
        }
        if (!user) via = 'signed_in_user';
        user = linking;
      } else if (!user) {
        if (!email) {
          throw identity.email === null
            ? IDP_ERRORS.emailMissing()
            : IDP_ERRORS.emailUnverified();
        }
        const existing = await findLiveUserByEmail(tx, tenant.id, email);
        if (existing && (existing.emailVerifiedAt !== null || (await this.isProtectedFromReclaim(tx, tenant.id, existing)))) {
          onLinkRequired(existing.id);
          throw IDP_ERRORS.linkRequired();
        }
        user = existing ?? (await this.createMember(inTx, email, identity, now));
        via = !existing ? 'new_user' : 'reclaimed_unverified_account';
      }
      refuseSuspended(user.status);
      if (user.emailVerifiedAt === null && email !== null && email === user.email) {
        await this.reclaimUnverified(inTx, user, identity, now);
      } else if (user.status === 'Pending') {
        throw SIGN_IN_ERRORS.emailNotVerified();
      }
      if (via) await this.link(inTx, user, identity, via, now);
      await touchIdentityLogin(tx, tenant.id, identity.issuer, identity.subject, now);
      return user;
    });
  }

  /**
   * Whether an account is never taken over by a provider sign-in, even with an unverified address
   * (docs/idp.md "Pre-registered accounts", docs/security.md): an Admin, an account with a second
   * factor (TOTP) or with a passkey. Whoever holds those proved more than a pre-registrant would; the
   * person links the provider after signing in instead.
   */
  private async isProtectedFromReclaim(tx: EntityManager, tenantId: string, user: User): Promise<boolean> {
    if (user.role === 'Admin' || isTotpEnrolled(user)) return true;
    return (await countPasskeysOfUser(tx, tenantId, user.id)) > 0;
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
    const link = await lockIdentity(tx, tenant.id, identity.issuer, identity.subject);
    if (!link) return null;
    const user = await findUserById(tx, tenant.id, link.userId);
    if (user && user.deletedAt === null) return user;
    await deleteIdentity(tx, tenant.id, link.id);
    return null;
  }

  private async link(
    scope: TenantScope, user: User, identity: IdpIdentityClaims, via: 'verified_email' | 'new_user' | 'reclaimed_unverified_account' | 'signed_in_user', now: Date,
  ): Promise<void> {
    await insertIdentity(scope.em, {
      id: randomUUID(),
      tenantId: scope.tenant.id,
      userId: user.id,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email === null ? null : normalizeEmail(identity.email).slice(0, 254),
      createdAt: now,
      lastLoginAt: now,
    });
    await this.audit.record(actingAs(scope, user.id), {
      action: 'IdpOauthLinked', target: { type: 'user', id: user.id }, details: { issuer: identity.issuer, subject: identity.subject, email: user.email, via },
    });
  }

  /** A new Active Member without a password, its email verified by the provider. Audits `UserSignup`. */
  private async createMember(scope: TenantScope, email: string, identity: IdpIdentityClaims, now: Date): Promise<User> {
    const { tenant } = scope;
    assertMaySignUp(tenant, email);
    const user = newUser({ tenantId: tenant.id, email, passwordHash: null, status: 'Active', role: 'Member', emailVerifiedAt: now, locale: scope.meta.locale ?? null }, now);
    await insertUser(scope.em, user);
    await this.audit.record(actingAs(scope, user.id), {
      action: 'UserSignup', target: { type: 'user', id: user.id }, details: { email, role: user.role, via: 'idp', issuer: identity.issuer },
    });
    return user;
  }

  /**
   * The provider identity takes over an account whose email was never verified (docs/idp.md
   * "Pre-registered accounts"): whoever registered it never proved the address, while the provider
   * just did, so nothing of the pre-registration may survive: every credential, factor and session
   * goes (AccountCredentialService.clearAll: password, TOTP, recovery codes, passkeys, email codes,
   * mailed tokens, MFA challenges, every other provider link, sessions with reason
   * `account_taken_over`); the address is marked verified and a `Pending` user `Active`. The role is
   * kept. Audits `UserPasswordChanged` (`via: account_reclaimed`) when there was a password, the
   * removed factors, and `UserEmailVerified`.
   */
  private async reclaimUnverified(scope: TenantScope, user: User, identity: IdpIdentityClaims, now: Date): Promise<void> {
    // the pre-registration's credentials are removed by the system; the address is verified by its owner
    const system = asSystem(scope);
    const target = { type: 'user', id: user.id };
    const cleared = await this.credentials.clearAll(system, user.id, 'account_taken_over', identity);
    const hadPassword = cleared.hadPassword;
    const sessionsEnded = cleared.sessionsEnded;
    await setEmailVerifiedByProvider(scope.em, scope.tenant.id, user.id, now);
    Object.assign(user, {
      passwordHash: null, totpSecretEnc: null, totpEnrolledAt: null, totpPendingSecretEnc: null, totpLastUsedStep: null,
      emailVerifiedAt: now, status: user.status === 'Pending' ? 'Active' : user.status,
    } satisfies Partial<User>);
    const reason = 'account_reclaimed';
    if (hadPassword) {
      await this.audit.record(system, {
        action: 'UserPasswordChanged', target, details: { via: reason, passwordRemoved: true, sessionsEnded, issuer: identity.issuer },
      });
    }
    await this.audit.record(actingAs(scope, user.id), {
      action: 'UserEmailVerified', target, details: { email: user.email, via: 'idp', reclaimed: true, sessionsEnded },
    });
  }
}
