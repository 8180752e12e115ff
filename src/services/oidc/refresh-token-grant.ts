import { errors as oidcErrors, type KoaContextWithOIDC, type Provider } from 'oidc-provider';
import { handler as providerRefreshTokenHandler, parameters as providerRefreshTokenParameters } from 'oidc-provider/lib/actions/grants/refresh_token.js';
import { checkAttestBinding } from 'oidc-provider/lib/helpers/check_attest_binding.js';
import { checkAccountMismatch, createAccessToken, issueIdToken, validateAccount } from 'oidc-provider/lib/helpers/grant_common.js';
import * as grantHelpers from 'oidc-provider/lib/helpers/grants.js';
import revoke from 'oidc-provider/lib/helpers/revoke.js';

/** The token request parameter that asks for an organization token (docs/oidc.md "Organization tokens"). */
export const ORGANIZATION_ID_PARAMETER = 'organization_id';
/** The `aud` of an organization token is this prefix and the organization's id. */
const ORGANIZATION_AUDIENCE_PREFIX = 'urn:organization:';
const GRANT_TYPE = 'refresh_token';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Client authentication methods whose refresh tokens are bound to an attested key (oidc-provider's list). */
const ATTESTED_CLIENT_AUTH = new Set(['attest_jwt_client_auth', 'attest_jwt_client_auth_dpop']);

/** `urn:organization:{id}`: the audience of an organization token. */
export function organizationAudience(organizationId: string): string {
  return `${ORGANIZATION_AUDIENCE_PREFIX}${organizationId}`;
}

/** The organization id of an organization token's audience, or undefined for any other audience. */
export function organizationIdOfAudience(audience: unknown): string | undefined {
  if (typeof audience !== 'string' || !audience.startsWith(ORGANIZATION_AUDIENCE_PREFIX)) return undefined;
  const id = audience.slice(ORGANIZATION_AUDIENCE_PREFIX.length);
  return UUID.test(id) ? id : undefined;
}

/** What the organization token grant needs from the tenant's provider configuration and data. */
export interface OrganizationTokenPolicy {
  /** The scope the refresh token must have been granted (`organizations`); else `invalid_scope`. */
  requiredScope: string;
  /**
   * The organization permissions the live, active account holds in the tenant's organization through
   * its organization roles (possibly none), or undefined when it is not a member (unknown
   * organization, another tenant's, removed, or organization deleted).
   */
  memberPermissions(organizationId: string, accountId: string): Promise<string[] | undefined>;
  /** The provider's own `rotateRefreshToken` setting, applied to organization token requests too. */
  rotateRefreshToken(ctx: KoaContextWithOIDC): boolean | Promise<boolean>;
  /** Lifetime (seconds) and signing algorithm of the organization token (a JWT, RFC 9068). */
  accessTokenTTL: number;
  signingAlg: string;
}

/** The request context of the token endpoint, where client and params are always set. */
type TokenContext = KoaContextWithOIDC & { oidc: { client: NonNullable<KoaContextWithOIDC['oidc']['client']>; params: Record<string, unknown> } };

/**
 * Replaces the provider's `refresh_token` grant (oidc-provider `registerGrantType`) with one that
 * also takes `organization_id` (docs/oidc.md "Organization tokens", docs/decisions.md "Organizations"):
 * - without it, the request goes to oidc-provider's own refresh-token handler, unchanged (rotation,
 *   replay detection, DPoP, scope narrowing, resource indicators, events);
 * - with it, issueOrganizationToken answers, following the provider's handler step by step.
 * The grant keeps the provider's parameters and the RFC 8707 `resource` (allowed twice), as the
 * provider registers them with resource indicators enabled.
 */
export function registerRefreshTokenGrant(provider: Provider, policy: OrganizationTokenPolicy): void {
  // the provider's grants receive lib/helpers/grants.js with the provider bound first (lib/helpers/initialize_app.js)
  const boundHelpers = Object.fromEntries(
    Object.entries(grantHelpers).map(([name, helper]) => [name, (helper as (...args: unknown[]) => unknown).bind(undefined, provider)]),
  );
  provider.registerGrantType(
    GRANT_TYPE,
    async (ctx) => {
      if (ctx.oidc.params?.[ORGANIZATION_ID_PARAMETER] === undefined) return providerRefreshTokenHandler(provider, boundHelpers, ctx);
      return issueOrganizationToken(provider, policy, ctx as TokenContext);
    },
    [...providerRefreshTokenParameters, 'resource', ORGANIZATION_ID_PARAMETER],
    ['resource'],
  );
}

/**
 * `grant_type=refresh_token` with `organization_id`: checks the refresh token exactly as the
 * provider's handler does (client, expiry, DPoP and attestation binding, grant, account, replay:
 * a used token revokes the grant), then that it was granted `policy.requiredScope` (else
 * `invalid_scope`) and that its account is a member of the organization (else `invalid_grant`),
 * before rotating it. Answers a JWT access token with `aud` `urn:organization:{id}` and `scope` the
 * asked-for permissions (all when `scope` is left out) that the member's roles grant; the
 * `organization_id` claim comes from the provider's `extraTokenClaims`. The ID token and the
 * rotated refresh token are those of a plain refresh.
 * @throws oidc-provider's InvalidRequest (malformed `organization_id`, combined with `resource`),
 *   InvalidGrant, InvalidScope.
 */
async function issueOrganizationToken(provider: Provider, policy: OrganizationTokenPolicy, ctx: TokenContext): Promise<void> {
  const { params, client } = ctx.oidc;
  if (typeof params.refresh_token !== 'string') throw new oidcErrors.InvalidRequest("missing required parameter 'refresh_token'");
  const organizationId = params[ORGANIZATION_ID_PARAMETER];
  if (typeof organizationId !== 'string' || !UUID.test(organizationId)) throw new oidcErrors.InvalidRequest('organization_id must be the id of an organization');
  if (params.resource !== undefined) throw new oidcErrors.InvalidRequest('organization_id cannot be combined with resource');

  const dPoP = await grantHelpers.validateDpop(provider, ctx);
  let refreshTokenValue = params.refresh_token;
  let refreshToken = await provider.RefreshToken.find(refreshTokenValue, { ignoreExpiration: true });
  if (!refreshToken) throw new oidcErrors.InvalidGrant('refresh token not found');
  if (refreshToken.clientId !== client.clientId) throw new oidcErrors.InvalidGrant('client mismatch');
  if (refreshToken.isExpired) throw new oidcErrors.InvalidGrant('refresh token is expired');
  // mutual TLS is not enabled in the tenant providers, so no refresh token is certificate-bound
  if (client.tlsClientCertificateBoundAccessTokens || refreshToken['x5t#S256']) {
    throw new oidcErrors.InvalidGrant('organization tokens are not issued for certificate-bound clients');
  }
  grantHelpers.checkDpopRequired(provider, ctx, dPoP);
  const grant = await grantHelpers.validateGrant(provider, ctx, refreshToken.grantId);
  // here the provider's handler checks `scope` against the refresh token's scopes; an organization
  // token's `scope` names organization permissions instead, narrowed to the member's roles below
  await grantHelpers.checkDpopReplay(provider, ctx, dPoP, client.clientId, oidcErrors.InvalidGrant);
  if (refreshToken.jkt && (!dPoP || refreshToken.jkt !== dPoP.thumbprint)) throw new oidcErrors.InvalidGrant('failed jkt verification');
  if (ATTESTED_CLIENT_AUTH.has(client.clientAuthMethod)) await checkAttestBinding(ctx, refreshToken);

  ctx.oidc.entity('RefreshToken', refreshToken);
  ctx.oidc.entity('Grant', grant);
  const account = await validateAccount(provider, ctx, refreshToken, 'refresh token');
  checkAccountMismatch(refreshToken, grant);
  ctx.oidc.entity('Account', account);

  if (refreshToken.consumed) {
    await Promise.all([refreshToken.destroy(), revoke(ctx, refreshToken.grantId)]);
    throw new oidcErrors.InvalidGrant('refresh token already used');
  }

  if (!refreshToken.scopes.has(policy.requiredScope)) {
    throw new oidcErrors.InvalidScope(`refresh token missing required scope ${policy.requiredScope}`, policy.requiredScope);
  }
  const held = await policy.memberPermissions(organizationId, account.accountId);
  if (!held) throw new oidcErrors.InvalidGrant('the account is not a member of this organization');

  if (await policy.rotateRefreshToken(ctx)) {
    await refreshToken.consume();
    ctx.oidc.entity('RotatedRefreshToken', refreshToken);
    const used = refreshToken;
    refreshToken = new provider.RefreshToken({
      accountId: used.accountId, acr: used.acr, amr: used.amr, authTime: used.authTime, claims: used.claims, client,
      expiresWithSession: used.expiresWithSession, iiat: used.iiat, grantId: used.grantId, gty: used.gty, nonce: used.nonce,
      resource: used.resource, rotations: typeof used.rotations === 'number' ? used.rotations + 1 : 1, scope: used.scope,
      sessionUid: used.sessionUid, sid: used.sid, rar: used.rar, 'x5t#S256': used['x5t#S256'], jkt: used.jkt, attestationJkt: used.attestationJkt,
    });
    if (refreshToken.gty && !refreshToken.gty.endsWith(GRANT_TYPE)) refreshToken.gty = `${refreshToken.gty} ${GRANT_TYPE}`;
    ctx.oidc.entity('RefreshToken', refreshToken);
    refreshTokenValue = await refreshToken.save();
  }

  const at = createAccessToken(provider, ctx, {
    accountId: account.accountId, expiresWithSession: refreshToken.expiresWithSession, grantId: refreshToken.grantId,
    sessionUid: refreshToken.sessionUid, sid: refreshToken.sid,
  }, refreshToken.gty);
  if (dPoP) at.setThumbprint('jkt', dPoP.thumbprint);
  if (at.gty && !at.gty.endsWith(GRANT_TYPE)) at.gty = `${at.gty} ${GRANT_TYPE}`;

  const asked = params.scope ? ctx.oidc.requestParamScopes : undefined;
  const audience = organizationAudience(organizationId);
  at.resourceServer = new provider.ResourceServer(audience, {
    audience, scope: held.join(' '), accessTokenFormat: 'jwt', accessTokenTTL: policy.accessTokenTTL, jwt: { sign: { alg: policy.signingAlg } },
  });
  at.scope = held.filter((permission) => !asked || asked.has(permission)).join(' ');

  ctx.oidc.entity('AccessToken', at);
  const accessToken = await at.save();
  const idToken = await issueIdToken(provider, ctx, refreshToken, at, grant);
  ctx.body = grantHelpers.buildTokenResponse(provider, {
    accessToken, expiresIn: at.expiration, idToken, refreshToken: refreshTokenValue, scope: at.scope, tokenType: at.tokenType,
  });
}
