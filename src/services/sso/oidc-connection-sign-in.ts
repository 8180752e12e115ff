import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { SsoRequestPurpose } from '../../entities/sso.js';
import type { Tenant } from '../../entities/tenant.js';
import { emailAddress, normalizeEmail } from '../../lib/email.js';
import type { TenantScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import { sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { IDP_ERRORS } from '../../errors/idp.js';
import type { IdpIdentityClaims, IdpProviderClient } from '../idp/idp-provider-client.js';
import { providerDidMfa, type IdpCallbackParams } from '../idp/idp-service.js';
import { SSO_REQUEST_TTL_SECONDS } from './saml-service.js';
import { consumeSsoRequest, deleteExpiredSsoRows, findSsoRequestPurpose, insertSsoAuthRequest } from '../../queries/sso-auth-request.js';
import { auditRefusal, issueCompletion, type VerifiedSsoIdentity } from './sso-completion.js';
import type { SsoConnectionWithDomains } from '../../queries/sso-connection.js';
import type { SsoConnectionService } from './sso-connection-service.js';
import { SSO_ERRORS } from '../../errors/sso.js';

const storedSecrets = z.object({ codeVerifier: z.string().min(1), nonce: z.string().min(1) });

function requestSecretsAssociatedData(tenantId: string, requestRowId: string): string {
  return `sso-request:${tenantId}:${requestRowId}`;
}

/**
 * OpenID Connect enterprise connections (docs/sso.md "OpenID Connect connections"): the authorization
 * code flow with PKCE (RFC 6749 §4.1, RFC 7636) at a customer company's OpenID provider (Okta, Entra
 * ID, Google Workspace...), on openid-client through the same client as the workspace's provider
 * (docs/idp.md). The callback verifies the ID token and hands a single-use completion code to the
 * browser that started the sign-in, as the SAML assertion consumer service does.
 */
export class OidcConnectionSignIn {
  constructor(
    private readonly keyring: Keyring,
    private readonly provider: IdpProviderClient,
    private readonly connections: SsoConnectionService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Starts a sign-in (or an Admin's test) at the connection's provider: a single-use request keyed by
   * the SHA-256 of `state`, with the nonce and PKCE verifier encrypted, bound to the browser's
   * binding value, answerable for {@link SSO_REQUEST_TTL_SECONDS}.
   * @returns the authorization URL.
   * @throws ApiError 400 `idp_unavailable` (the provider's discovery failed).
   */
  async begin(
    em: EntityManager, tenant: Tenant, connection: SsoConnectionWithDomains, browserBinding: string, purpose: SsoRequestPurpose, returnTo?: string,
  ): Promise<string> {
    const issuer = this.issuerOf(connection);
    const request = await this.provider.authorizationRequest(issuer, this.connections.clientCredentials(connection), this.connections.redirectUri(tenant, connection.id));
    const now = new Date();
    const id = randomUUID();
    await deleteExpiredSsoRows(em, tenant.id, now);
    await insertSsoAuthRequest(em, {
      id, tenantId: tenant.id, connectionId: connection.id, requestId: sha256Hex(request.state), browserBindingHash: sha256Hex(browserBinding), purpose,
      returnTo: returnTo ?? null, createdAt: now, expiresAt: new Date(now.getTime() + SSO_REQUEST_TTL_SECONDS * 1000),
      secretsEnc: this.keyring.encrypt(JSON.stringify({ codeVerifier: request.codeVerifier, nonce: request.nonce }), requestSecretsAssociatedData(tenant.id, id)),
      consumedAt: null, completionHash: null, identityEnc: null, completionExpiresAt: null, completedAt: null,
    });
    return request.authorizationUrl;
  }

  /**
   * `GET /v1/{slug}/sso/{connectionId}/oidc/callback` (OIDC Core §3.1.2.5–3.1.3.7): spends the request
   * of `state` (once, accepted or not), exchanges the code and verifies the ID token (issuer, audience,
   * nonce, PKCE; RFC 9207 `iss`), then requires a provider-verified address of the connection's
   * domains. A refusal is audited `UserLoginFailed` like a SAML one.
   * @returns the completion code for the browser, and the request's purpose.
   * @throws ApiError 404 `not_found` (connection), 401 `idp_error`, 401 `sso_request_unknown`
   *   (`state` missing, unknown, answered or expired), 401 `code_exchange_failed`, `id_token_invalid`,
   *   `issuer_mismatch`, 400 `idp_unavailable`, 401 `sso_email_missing`, `idp_email_unverified`,
   *   `sso_email_domain_mismatch`.
   */
  async consumeCallback(scope: TenantScope, connectionId: string, params: IdpCallbackParams): Promise<{ code: string; purpose: SsoRequestPurpose }> {
    const { em, tenant } = scope;
    const connection = await this.connections.find(em, tenant.id, connectionId);
    if (connection.protocol !== 'oidc') throw SSO_ERRORS.connectionNotFound();
    try {
      return await this.accept(em, tenant, connection, params);
    } catch (err) {
      await auditRefusal(this.audit, scope, connection.id, err);
      throw err;
    }
  }

  /** The purpose of the request a callback's `state` names (answered or not), for where to send a refused browser. */
  async purposeOf(em: EntityManager, tenant: Tenant, connectionId: string, state: string | undefined): Promise<SsoRequestPurpose | undefined> {
    if (state === undefined) return undefined;
    return findSsoRequestPurpose(em, tenant.id, connectionId, sha256Hex(state));
  }

  private async accept(
    em: EntityManager, tenant: Tenant, connection: SsoConnectionWithDomains, params: IdpCallbackParams,
  ): Promise<{ code: string; purpose: SsoRequestPurpose }> {
    const now = new Date();
    const request = params.state === undefined ? undefined : await consumeSsoRequest(em, tenant.id, connection.id, sha256Hex(params.state), now);
    if (params.error !== undefined) throw IDP_ERRORS.providerError({ error: params.error, errorDescription: params.error_description });
    if (!request || request.secretsEnc === null || params.state === undefined) throw SSO_ERRORS.requestUnknown();
    if (params.code === undefined) throw IDP_ERRORS.missingCode();
    const secrets = storedSecrets.parse(JSON.parse(this.keyring.decrypt(request.secretsEnc, requestSecretsAssociatedData(tenant.id, request.id))));
    const issuer = this.issuerOf(connection);
    const claims = await this.provider.exchangeCode(
      issuer, this.connections.clientCredentials(connection), this.connections.redirectUri(tenant, connection.id),
      { code: params.code, state: params.state, iss: params.iss }, secrets,
    );
    const identity = this.identityOf(connection, issuer, claims);
    return { code: await issueCompletion(em, this.keyring, tenant.id, request.id, identity, now), purpose: request.purpose };
  }

  /** The person of a verified ID token: a provider-verified address of the connection's domains. */
  private identityOf(connection: SsoConnectionWithDomains, issuer: string, claims: IdpIdentityClaims): VerifiedSsoIdentity {
    if (claims.email === null) throw SSO_ERRORS.emailMissing();
    const email = normalizeEmail(claims.email);
    if (!emailAddress.safeParse(email).success) throw SSO_ERRORS.emailMissing();
    if (!claims.emailVerified) throw IDP_ERRORS.emailUnverified();
    if (!connection.domains.includes(email.slice(email.lastIndexOf('@') + 1))) throw SSO_ERRORS.emailDomainMismatch();
    return {
      issuer, subject: claims.subject, email, name: null, authnContext: claims.amr.length > 0 ? claims.amr.join(' ') : null,
      attributes: claims.amr.length > 0 ? { amr: claims.amr } : {}, providerMfa: providerDidMfa(claims.amr),
    };
  }

  private issuerOf(connection: SsoConnectionWithDomains): string {
    if (connection.oidcIssuer === null) throw SSO_ERRORS.connectionNotFound();
    return connection.oidcIssuer;
  }
}
