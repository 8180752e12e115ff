import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { isLoopbackHttpUrl } from '../../config.js';
import type { ApiError } from '../../lib/errors.js';
import { ForbiddenTargetError } from '../webhooks/webhook-target.js';
import { guardedProviderFetch } from './idp-outbound.js';
import { IDP_ERRORS } from '../../errors/idp.js';

/** Seconds a discovered provider metadata document is used before it is fetched again. */
export const DISCOVERY_TTL_SECONDS = 86_400;
/** Seconds allowed for each HTTP request to the provider (discovery, token, JWKS, userinfo). */
export const PROVIDER_TIMEOUT_SECONDS = 10;
/** Scopes requested at the provider: an OpenID Connect sign-in with the email claims (OIDC Core §5.4). */
export const IDP_SCOPES = 'openid email';
/** Most providers whose discovery document and JWKS are kept at once (one per distinct tenant issuer); the oldest is dropped. */
export const MAX_CACHED_ISSUERS = 256;

/** How the client reaches providers (docs/idp.md "A provider per tenant"). */
export interface IdpProviderClientOptions {
  /** `IDP_ISSUER`: the deployment's own provider, chosen by the operator, reached without the address guard. */
  defaultIssuer: string;
  /** `IDP_ALLOW_PRIVATE_ISSUERS`: when false, tenant issuers are reached through {@link guardedProviderFetch}. */
  allowPrivateIssuers: boolean;
}

/** Sets `key` as the newest entry of `map`, dropping the oldest beyond {@link MAX_CACHED_ISSUERS}. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > MAX_CACHED_ISSUERS) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) break;
    map.delete(oldest);
  }
}

/** The client registration of one tenant at the provider (`PUT oauth/idp/credentials`), secret decrypted. */
export interface IdpClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** What a verified ID token (and, for missing email claims, the UserInfo response) says about the user. */
export interface IdpIdentityClaims {
  issuer: string;
  /** The `sub` claim. */
  subject: string;
  /** Lower-cased by the caller; null when the provider shares none. */
  email: string | null;
  /** True only when the provider asserted `email_verified: true`. */
  emailVerified: boolean;
  /** The ID token's `amr` claim (RFC 8176 authentication method references); empty when absent. */
  amr: string[];
}

/** The parameters of an authorization request that must be kept until its callback. */
export interface AuthorizationRequest {
  authorizationUrl: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The authorization response parameters the provider sent back to the callback. */
export interface AuthorizationResponse {
  code: string;
  state: string;
  /** RFC 9207 issuer identifier, when the provider sends one. */
  iss?: string | undefined;
}

interface CachedMetadata {
  metadata: oidc.ServerMetadata;
  fetchedAt: number;
}

function errorCodeOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
    ? (err as { code: string }).code
    : undefined;
}

/** Failures of the ID token's own checks (claims, timestamps, signature, key selection). */
const ID_TOKEN_ERROR_CODES = new Set([
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  'OAUTH_JWS_SIGNATURE_VERIFICATION_FAILED',
  'OAUTH_KEY_SELECTION_FAILED',
  'OAUTH_INVALID_RESPONSE',
  'OAUTH_PARSE_ERROR',
]);

/**
 * The service's side of OpenID Connect 1.0 with one external provider, through `openid-client`
 * (authorization code flow, RFC 6749 §4.1, with PKCE S256, RFC 7636). The provider's discovery
 * document is fetched once per issuer and reused; a failed discovery is not cached, so the next
 * request retries. The JWKS used to verify ID token signatures is shared between requests too.
 * Both caches are keyed by issuer (the deployment's `IDP_ISSUER` and every tenant's own provider)
 * and bounded to {@link MAX_CACHED_ISSUERS} entries.
 */
export class IdpProviderClient {
  private readonly metadata = new Map<string, CachedMetadata>();
  private readonly pending = new Map<string, Promise<oidc.ServerMetadata>>();
  private readonly jwks = new Map<string, oidc.ExportedJWKSCache>();

  constructor(
    private readonly logger: Logger,
    private readonly options: IdpProviderClientOptions,
  ) {}

  /** The fetch for requests to `issuer`'s provider: the address-guarded one for a tenant's own issuer. */
  private fetchFor(issuer: string): oidc.CustomFetch | undefined {
    return issuer === this.options.defaultIssuer || this.options.allowPrivateIssuers ? undefined : guardedProviderFetch;
  }

  /**
   * Checks a tenant's issuer before it is saved: fetches its discovery document now (not from the
   * cache), requires its `issuer` to be the same identifier (OpenID Connect Discovery 1.0 §4.3), and
   * caches it. Uses the same timeout and address guard as sign-ins.
   * @returns the issuer identifier exactly as the provider's document spells it (the ID token `iss`).
   * @throws ApiError 400 `issuer_mismatch` (the document names another issuer), 400
   *   `idp_issuer_not_allowed` (the issuer or an address it resolves to is not public), 400
   *   `idp_discovery_failed` (unreachable, timeout, not a discovery document).
   */
  async verifyIssuer(issuer: string): Promise<string> {
    let metadata: oidc.ServerMetadata;
    try {
      metadata = await this.discover(issuer);
    } catch (err) {
      const code = errorCodeOf(err);
      if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
        throw IDP_ERRORS.discoveryIssuerMismatch();
      }
      if (err instanceof ForbiddenTargetError || (err as { cause?: unknown }).cause instanceof ForbiddenTargetError) {
        throw IDP_ERRORS.issuerNotAllowed();
      }
      this.logger.info({ code, message: (err as Error).message, issuer }, 'tenant identity provider discovery failed');
      throw IDP_ERRORS.discoveryFailed({ issuer, failure: code ?? 'unreachable' });
    }
    if (new URL(metadata.issuer).href !== new URL(issuer).href) {
      throw IDP_ERRORS.discoveryIssuerMismatch();
    }
    remember(this.metadata, metadata.issuer, { metadata, fetchedAt: Date.now() });
    return metadata.issuer;
  }

  /**
   * Builds the authorization URL (OIDC Core §3.1.2.1) with fresh `state`, `nonce` and PKCE S256
   * `code_challenge`; the caller keeps `state`, `nonce` and `codeVerifier` server-side.
   * @throws ApiError 400 `idp_unavailable` when the provider's discovery document cannot be fetched.
   */
  async authorizationRequest(issuer: string, credentials: IdpClientCredentials, redirectUri: string): Promise<AuthorizationRequest> {
    const config = await this.configuration(issuer, credentials);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: IDP_SCOPES,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { authorizationUrl: url.href, state, nonce, codeVerifier };
  }

  /**
   * Exchanges the authorization code at the token endpoint (with the PKCE verifier) and verifies the
   * ID token: signature against the provider's JWKS, `iss`, `aud`/`azp`, `exp`/`iat` and `nonce`
   * (OIDC Core §3.1.3.7). Missing email claims are read from the UserInfo endpoint for the same `sub`.
   * @throws ApiError 400 `idp_unavailable` (provider unreachable), 401 `issuer_mismatch` (RFC 9207
   *   `iss` missing or wrong), 401 `code_exchange_failed` (the token endpoint refused the code or the
   *   client), 401 `id_token_invalid`.
   */
  async exchangeCode(
    issuer: string,
    credentials: IdpClientCredentials,
    redirectUri: string,
    response: AuthorizationResponse,
    expected: { nonce: string; codeVerifier: string },
  ): Promise<IdpIdentityClaims> {
    const config = await this.configuration(issuer, credentials);
    const { issuer: expectedIssuer, authorization_response_iss_parameter_supported: issSupported } = config.serverMetadata();
    // RFC 9207 §2.4 (mix-up defence): openid-client checks this too; checked first for a clear reason.
    if (response.iss !== undefined ? response.iss !== expectedIssuer : issSupported === true) {
      throw IDP_ERRORS.responseIssuerMismatch();
    }
    const currentUrl = new URL(redirectUri);
    currentUrl.searchParams.set('code', response.code);
    currentUrl.searchParams.set('state', response.state);
    if (response.iss !== undefined) currentUrl.searchParams.set('iss', response.iss);

    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
        expectedState: response.state,
        expectedNonce: expected.nonce,
        pkceCodeVerifier: expected.codeVerifier,
        idTokenExpected: true,
      });
    } catch (err) {
      throw this.exchangeError(err);
    } finally {
      this.keepJwks(issuer, config);
    }
    const claims = tokens.claims();
    if (!claims) throw IDP_ERRORS.idTokenMissing();

    let email = claims.email;
    let emailVerified = claims.email_verified;
    if (email === undefined && config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        email = info.email;
        emailVerified = info.email_verified;
      } catch (err) {
        throw this.exchangeError(err);
      }
    }
    return {
      issuer: claims.iss,
      subject: claims.sub,
      email: typeof email === 'string' && email.length > 0 ? email : null,
      emailVerified: emailVerified === true || emailVerified === 'true',
      amr: Array.isArray(claims.amr) ? claims.amr.filter((value): value is string => typeof value === 'string') : [],
    };
  }

  /** Maps an openid-client failure to the API error the caller sees; logs it without secrets. */
  private exchangeError(err: unknown): ApiError {
    const code = errorCodeOf(err);
    if (err instanceof oidc.ResponseBodyError) {
      this.logger.info({ providerError: err.error, status: err.status }, 'identity provider refused the code exchange');
      return IDP_ERRORS.codeRefused({ error: err.error, errorDescription: err.error_description });
    }
    if (err instanceof oidc.WWWAuthenticateChallengeError) {
      const error = err.cause.find((challenge) => challenge.parameters.error)?.parameters.error ?? 'invalid_client';
      this.logger.info({ providerError: error, status: err.status }, 'identity provider refused the client authentication');
      return IDP_ERRORS.clientAuthenticationRefused({ error });
    }
    if (code !== undefined && ID_TOKEN_ERROR_CODES.has(code)) {
      this.logger.info({ code, message: (err as Error).message }, 'ID token failed verification');
      return IDP_ERRORS.idTokenInvalid({ check: code });
    }
    if (err instanceof oidc.AuthorizationResponseError) {
      return IDP_ERRORS.providerError({ error: err.error });
    }
    if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON') {
      return IDP_ERRORS.codeExchangeFailed();
    }
    this.logger.warn({ err }, 'identity provider request failed');
    return IDP_ERRORS.unavailable();
  }

  /** A client configuration for one tenant's credentials against the (cached) provider metadata. */
  private async configuration(issuer: string, credentials: IdpClientCredentials): Promise<oidc.Configuration> {
    const metadata = await this.serverMetadata(issuer);
    const supported = metadata.token_endpoint_auth_methods_supported;
    // RFC 8414 §2: an absent list means client_secret_basic; prefer it, fall back to client_secret_post.
    const clientAuth = !supported || supported.includes('client_secret_basic')
      ? oidc.ClientSecretBasic(credentials.clientSecret)
      : oidc.ClientSecretPost(credentials.clientSecret);
    const config = new oidc.Configuration(metadata, credentials.clientId, { client_secret: credentials.clientSecret }, clientAuth);
    config.timeout = PROVIDER_TIMEOUT_SECONDS;
    const guarded = this.fetchFor(issuer);
    if (guarded) config[oidc.customFetch] = guarded;
    if (isLoopbackHttpUrl(new URL(issuer))) oidc.allowInsecureRequests(config);
    oidc.enableNonRepudiationChecks(config);
    const jwks = this.jwks.get(issuer);
    if (jwks) oidc.setJwksCache(config, jwks);
    return config;
  }

  private keepJwks(issuer: string, config: oidc.Configuration): void {
    const jwks = oidc.getJwksCache(config);
    if (jwks) remember(this.jwks, issuer, jwks);
  }

  /**
   * The provider's discovery document (OpenID Connect Discovery 1.0, issuer validated by
   * openid-client). Cached per issuer for {@link DISCOVERY_TTL_SECONDS}; concurrent callers share one
   * fetch; a failure is not cached; a stale document is still used when a refresh fails.
   * @throws ApiError 400 `idp_unavailable`.
   */
  private async serverMetadata(issuer: string): Promise<oidc.ServerMetadata> {
    const cached = this.metadata.get(issuer);
    if (cached && Date.now() - cached.fetchedAt < DISCOVERY_TTL_SECONDS * 1000) return cached.metadata;
    let fetching = this.pending.get(issuer);
    if (!fetching) {
      fetching = this.discover(issuer).finally(() => this.pending.delete(issuer));
      this.pending.set(issuer, fetching);
    }
    try {
      const metadata = await fetching;
      remember(this.metadata, issuer, { metadata, fetchedAt: Date.now() });
      return metadata;
    } catch (err) {
      if (cached) {
        this.logger.warn({ err, issuer }, 'identity provider discovery refresh failed; using the previous document');
        return cached.metadata;
      }
      this.logger.warn({ err, issuer }, 'identity provider discovery failed');
      throw IDP_ERRORS.unavailable();
    }
  }

  private async discover(issuer: string): Promise<oidc.ServerMetadata> {
    const url = new URL(issuer);
    const execute = isLoopbackHttpUrl(url) ? [oidc.allowInsecureRequests] : [];
    // Discovery needs no client; the placeholder id is never sent to the provider.
    const guarded = this.fetchFor(issuer);
    const config = await oidc.discovery(url, 'discovery', undefined, oidc.None(), {
      execute,
      timeout: PROVIDER_TIMEOUT_SECONDS,
      ...(guarded ? { [oidc.customFetch]: guarded } : {}),
    });
    return { ...config.serverMetadata() };
  }
}
