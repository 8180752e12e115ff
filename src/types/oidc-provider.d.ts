/** The part of oidc-provider 9 (untyped JavaScript) this service and its tests use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ClientAdapter {
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
  }

  /** What `interactionDetails` answers about a pending sign-in (oidc-provider's Interaction model). */
  export interface InteractionDetails {
    uid: string;
    /** Seconds since the epoch when the interaction was created. */
    iat?: number;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id?: string; max_age?: number; prompt?: string };
    session?: { accountId?: string; uid?: string };
    /** The grant the authorization holds when the interaction began (oidc-provider's `loadExistingGrant`), if any. */
    grantId?: string;
  }

  /** A client (application) as the provider's hooks and grants see it. */
  export interface ClientInstance {
    clientId: string;
    /** How the client authenticated at this endpoint (`client_secret_basic`, `none`, …). */
    clientAuthMethod: string;
    /** RFC 8705: the client's access tokens are bound to its TLS certificate. */
    tlsClientCertificateBoundAccessTokens?: boolean;
    grantTypeAllowed(grantType: string): boolean;
  }

  /** The part of oidc-provider's request context the service's hooks read. */
  export interface KoaContextWithOIDC {
    oidc: {
      session?: { accountId?: string };
      client?: ClientInstance;
      params?: Record<string, unknown>;
      entities: Record<string, unknown>;
      /** The scopes of the request's `scope` parameter. */
      requestParamScopes: Set<string>;
      /** Records an entity of this request (`RefreshToken`, `AccessToken`, `Grant`, `Account`, …) for the provider's events. */
      entity(name: string, value: unknown): void;
      [key: string]: unknown;
    };
    /** Koa's request method, query, and header reader. */
    method: string;
    query: Record<string, string | string[] | undefined>;
    get(header: string): string;
    /** Koa's response header writer and reader. */
    set(header: string, value: string): void;
    response: { get(header: string): string };
    type: string;
    body: unknown;
    [key: string]: unknown;
  }

  /** OAuth 2.0 errors the provider's hooks may throw (RFC 6749 §5.2, RFC 8707 §2). */
  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
    InvalidGrant: new (description?: string) => Error;
    /** `detail` is the scope that is missing or not allowed. */
    InvalidScope: new (description: string, detail?: string) => Error;
  };

  /** A grant as the provider's hooks handle it. */
  export interface GrantInstance {
    /** The grant's id (set once saved). */
    jti: string;
    accountId?: string;
    clientId?: string;
    /** When it expires, seconds since the epoch (set once saved). */
    exp?: number;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  /** What `features.resourceIndicators.getResourceServerInfo` answers for one resource (RFC 8707). */
  export interface ResourceServerInfo {
    /** Space-separated: the scopes a token for this resource may carry. */
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: 'opaque' | 'jwt';
    jwt?: { sign?: { alg: string } };
  }

  /** The resource server an access token is for. */
  export interface ResourceServerInstance extends ResourceServerInfo {
    identifier(): string;
  }

  /** A stored refresh token (oidc-provider's RefreshToken model). */
  export interface RefreshTokenInstance {
    accountId: string;
    clientId: string;
    grantId: string;
    /** The grant types the token went through, space-separated (`authorization_code refresh_token`). */
    gty: string;
    scope: string;
    readonly scopes: Set<string>;
    readonly isExpired: boolean;
    /** Set once the token was used (rotated). */
    readonly consumed?: unknown;
    acr?: string;
    amr?: string[];
    authTime?: number;
    claims?: unknown;
    expiresWithSession?: boolean;
    iiat?: number;
    nonce?: string;
    resource?: string | string[];
    rotations?: number;
    sessionUid?: string;
    sid?: string;
    rar?: unknown;
    /** RFC 8705 certificate binding. */
    'x5t#S256'?: string;
    /** RFC 9449 DPoP key binding. */
    jkt?: string;
    attestationJkt?: string;
    consume(): Promise<void>;
    destroy(): Promise<void>;
    save(): Promise<string>;
  }

  /** An access token being issued (oidc-provider's AccessToken model). */
  export interface AccessTokenInstance {
    gty?: string;
    scope?: string;
    resourceServer?: ResourceServerInstance;
    /** Seconds until it expires. */
    readonly expiration: number;
    /** `Bearer`, or `DPoP` for a DPoP-bound token. */
    readonly tokenType: string;
    setThumbprint(kind: 'jkt' | 'x5t', value: string): void;
    save(): Promise<string>;
  }
  export class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    readonly issuer: string;
    proxy: boolean;
    static readonly Client: unknown;
    readonly Client: {
      readonly adapter: ClientAdapter;
      /** The client metadata validator; `invalidate(message, code)` refuses a client. */
      readonly Schema: { prototype: { invalidate(message: string, code?: string): void } };
    };
    readonly Grant: (new (properties: { accountId: string; clientId: string }) => GrantInstance) & {
      find(id: string): Promise<GrantInstance | undefined>;
    };
    readonly RefreshToken: (new (properties: Record<string, unknown>) => RefreshTokenInstance) & {
      find(value: string, options?: { ignoreExpiration?: boolean }): Promise<RefreshTokenInstance | undefined>;
    };
    readonly ResourceServer: new (identifier: string, info: ResourceServerInfo) => ResourceServerInstance;
    /**
     * Registers (or replaces) the handler of a token endpoint grant type and the body parameters it
     * takes; `allowedDuplicateParameters` may be sent more than once (RFC 8707 `resource`).
     */
    registerGrantType(
      name: string,
      handler: (ctx: KoaContextWithOIDC) => Promise<void>,
      parameters?: Iterable<string>,
      allowedDuplicateParameters?: Iterable<string>,
    ): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    /** Adds a Koa middleware before the provider's routes. */
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: never[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: Record<string, unknown>,
    ): Promise<string>;
    /** Ends a user interaction with its result (`{ login: { accountId, amr? } }`, `{ consent }`, …). */
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: Record<string, unknown>,
    ): Promise<void>;
  }

  export default Provider;
}

/**
 * oidc-provider 9.13's own `refresh_token` grant and the helpers its grants share: JavaScript modules
 * of the package (it has no `exports` map), used by src/services/oidc/refresh-token-grant.ts, which
 * keeps the provider's grant for a plain refresh and follows it step by step for an organization
 * token. Pinned: package.json names the exact oidc-provider version.
 */
declare module 'oidc-provider/lib/actions/grants/refresh_token.js' {
  import type { KoaContextWithOIDC, Provider } from 'oidc-provider';
  /** The provider's refresh-token grant: `helpers` is lib/helpers/grants.js with the provider bound first. */
  export function handler(provider: Provider, helpers: Record<string, unknown>, ctx: KoaContextWithOIDC): Promise<void>;
  /** Its body parameters (`refresh_token`, `scope`). */
  export const parameters: Set<string>;
  export const grantType: 'refresh_token';
}

declare module 'oidc-provider/lib/helpers/grants.js' {
  import type { GrantInstance, KoaContextWithOIDC, Provider } from 'oidc-provider';
  /** A verified DPoP proof (RFC 9449): the thumbprint of its key. */
  export interface DpopProof {
    thumbprint: string;
  }
  /** Verifies the request's DPoP proof, when it carries one. */
  export function validateDpop(provider: Provider, ctx: KoaContextWithOIDC): Promise<DpopProof | undefined>;
  /** Refuses a request without a proof from a client whose access tokens must be DPoP-bound. */
  export function checkDpopRequired(provider: Provider, ctx: KoaContextWithOIDC, dPoP: DpopProof | undefined): void;
  /** Refuses a DPoP proof seen before (its `jti`). */
  export function checkDpopReplay(
    provider: Provider, ctx: KoaContextWithOIDC, dPoP: DpopProof | undefined, clientId: string, errorClass: new (description?: string) => Error,
  ): Promise<void>;
  /** The grant `grantId`: `invalid_grant` when it is gone, expired or another client's. */
  export function validateGrant(provider: Provider, ctx: KoaContextWithOIDC, grantId: string): Promise<GrantInstance>;
  /** The token endpoint's JSON answer. */
  export function buildTokenResponse(provider: Provider, response: {
    accessToken: string; expiresIn: number; idToken?: string; refreshToken?: string; scope?: string; tokenType: string;
  }): Record<string, unknown>;
}

declare module 'oidc-provider/lib/helpers/grant_common.js' {
  import type { AccessTokenInstance, GrantInstance, KoaContextWithOIDC, Provider, RefreshTokenInstance } from 'oidc-provider';
  /** The account of the token, through the provider's `findAccount`: `invalid_grant` when there is none (deleted, suspended). */
  export function validateAccount(provider: Provider, ctx: KoaContextWithOIDC, source: RefreshTokenInstance, label: string): Promise<{ accountId: string }>;
  /** `invalid_grant` when the token's account is not the grant's. */
  export function checkAccountMismatch(source: RefreshTokenInstance, grant: GrantInstance): void;
  /** A new access token of the request's client from `source`'s account, grant and session. */
  export function createAccessToken(
    provider: Provider, ctx: KoaContextWithOIDC,
    source: { accountId: string; expiresWithSession?: boolean; grantId: string; sessionUid?: string; sid?: string }, gty: string,
  ): AccessTokenInstance;
  /** The ID token of a token answer (undefined without `openid`). */
  export function issueIdToken(
    provider: Provider, ctx: KoaContextWithOIDC, source: RefreshTokenInstance, at: AccessTokenInstance, grant: GrantInstance,
  ): Promise<string | undefined>;
}

declare module 'oidc-provider/lib/helpers/revoke.js' {
  import type { KoaContextWithOIDC } from 'oidc-provider';
  /** Revokes every token of the grant, and the grant (per `revokeGrantPolicy`), emitting `grant.revoked`. */
  export default function revoke(ctx: KoaContextWithOIDC, grantId: string): Promise<void>;
}

declare module 'oidc-provider/lib/helpers/check_attest_binding.js' {
  import type { KoaContextWithOIDC, RefreshTokenInstance } from 'oidc-provider';
  /** Attestation-based client authentication: the token must be bound to the attested key. */
  export function checkAttestBinding(ctx: KoaContextWithOIDC, token: RefreshTokenInstance): Promise<void>;
}
