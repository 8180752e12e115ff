import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { ApiKeyEnvironment } from '../../entities/api-key.js';
import type { Session } from '../../entities/session.js';
import { TenantSchema, type Tenant } from '../../entities/tenant.js';
import { UserSchema, type User, type UserRole } from '../../entities/user.js';
import { rowToEntity } from '../../db/rows.js';
import { verifyAccessToken, type AccessTokenClaims, type AccessTokenFailure } from '../../security/access-token.js';
import { sha256Hex } from '../../security/tokens.js';
import { findLiveTenantBySlug } from '../../queries/tenant.js';
import { assertMaySignIn } from '../account-policy/sign-in-eligibility.js';
import { findTenantWithSession } from '../../queries/session.js';
import { findApiKeyByHash, touchApiKeyLastUsed } from '../../queries/api-key.js';
import { SESSION_ERRORS } from '../../errors/session.js';

/** Plaintext API keys start with one of these (docs/api-rules.md "Resources"). */
export const API_KEY_PREFIXES = ['ak_live_', 'ak_test_'] as const;

/** A person signed in through a session. */
export interface UserPrincipal {
  kind: 'user';
  tenantId: string;
  userId: string;
  sessionId: string;
  /** The role as stored now, not as it was when the token was signed. */
  role: UserRole;
}

/** A tenant's server acting through an API key; it acts as an Admin of its tenant. */
export interface ApiKeyPrincipal {
  kind: 'api_key';
  tenantId: string;
  apiKeyId: string;
  /** `test` for an `ak_test_` key, which may not change the tenant's security settings. */
  environment: ApiKeyEnvironment;
}

export type Principal = UserPrincipal | ApiKeyPrincipal;

/** What the session check keeps of the session and its user. */
export type SessionUserRow = Pick<Session, 'userId' | 'revokedAt'> & Pick<User, 'role' | 'status'> & { userDeletedAt: User['deletedAt'] };

/** Milliseconds since the epoch of a raw timestamp column, or null. */
function epochMs(value: Date | string | null): number | null {
  return value === null ? null : new Date(value).getTime();
}

/**
 * The session check of an access token, read in the same query as its tenant (see `resolveTenant`).
 * It lives in the request's tRPC context (`ctx.sessionCheck`), never in the service.
 */
export type SessionCheck =
  | {
      /** The bearer token the check was made for; `authenticate` uses the check only for this token. */
      token: string;
      verified: true;
      claims: AccessTokenClaims;
      /** The session with its user, or undefined when no session of that user exists in the tenant. */
      row: SessionUserRow | undefined;
      /** The user row read by the same query (GET me answers from it), or undefined. */
      user: User | undefined;
    }
  | {
      token: string;
      /** The signature, issuer, audience or expiry did not verify: nothing was read. */
      verified: false;
      reason: AccessTokenFailure;
    };

/** The tenant of a request, with the session check of its access token when there is one. */
export interface TenantResolution {
  tenant: Tenant;
  sessionCheck: SessionCheck | undefined;
}

/** How often at most `api_key.last_used_at` is written for one key, in milliseconds. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/**
 * Resolves the bearer credential of a request (docs/api-rules.md "Credentials and sessions") to a principal of the route's tenant.
 * Access tokens are checked against their session on every request, so an ended session fails at once.
 */
export class BearerAuthenticationService {
  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  /**
   * The live (not soft-deleted) tenant of a slug, or null; the tenant look-up of every tenant-scoped
   * request. When `authorization` carries an access token that verifies, the same query also reads
   * the token's session and user (the check `authenticate` needs), so an authenticated request costs
   * one round trip less. Nothing is cached: both are read fresh for this request, and the session
   * check is returned to the caller (the tenant middleware puts it in the request's context).
   * @param readEarlier the same request's read of the live tenant of `slug` with `em`, when an
   *   earlier step made it (the brute-force guard reads the workspace's lockout policy): used instead
   *   of a second read when no access token needs the combined query.
   */
  async resolveTenant(
    em: EntityManager, slug: string, authorization: string | undefined, readEarlier?: Promise<Tenant | null>,
  ): Promise<TenantResolution | null> {
    const token = bearerToken(authorization);
    const verified = token && !isApiKey(token) ? verifyAccessToken(token, this.config.jwtSecret) : undefined;
    if (!token || !verified?.ok) {
      const tenant = await (readEarlier ?? findLiveTenantBySlug(em, slug));
      if (!tenant) return null;
      return { tenant, sessionCheck: token && verified && !verified.ok ? { token, verified: false, reason: verified.reason } : undefined };
    }
    const { claims } = verified;
    const found = await findTenantWithSession(em, slug, claims.sid, claims.sub);
    if (!found) return null;
    const tenant = rowToEntity(em, TenantSchema, found.tenant);
    if (!found.session) return { tenant, sessionCheck: { token, verified: true, claims, row: undefined, user: undefined } };
    const user = rowToEntity(em, UserSchema, found.session.user);
    const session: SessionUserRow = {
      userId: user.id,
      role: user.role,
      status: user.status,
      userDeletedAt: user.deletedAt,
      revokedAt: found.session.revokedAt,
    };
    return { tenant, sessionCheck: { token, verified: true, claims, row: session, user } };
  }

  /**
   * The principal of a request's bearer credential. An access token is judged from the session check
   * `resolveTenant` made for this request (no second query); an API key is looked up by its hash.
   * @param authorization the raw `Authorization` header.
   * @param sessionCheck what `resolveTenant` read for this request's token.
   * @throws ApiError 401 `missing_credential`, `invalid_token`, `token_expired`, `tenant_mismatch`,
   *   `session_revoked`, `user_suspended`, `email_not_verified` (a `Pending` user's session works once
   *   the address is verified), `api_key_revoked`, `api_key_expired`.
   */
  async authenticate(em: EntityManager, tenant: Tenant, authorization: string | undefined, sessionCheck: SessionCheck | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    if (!token) throw SESSION_ERRORS.missingCredential();
    if (isApiKey(token)) return this.authenticateApiKey(em, tenant, token);
    return authenticateAccessToken(tenant, token, sessionCheck);
  }

  private async authenticateApiKey(em: EntityManager, tenant: Tenant, token: string): Promise<ApiKeyPrincipal> {
    const row = await findApiKeyByHash(em, sha256Hex(token));
    if (!row) throw SESSION_ERRORS.invalidApiKey();
    if (row.tenantId !== tenant.id) throw SESSION_ERRORS.apiKeyTenantMismatch();
    if (row.revokedAt) throw SESSION_ERRORS.apiKeyRevoked();
    const now = Date.now();
    const expiresAt = epochMs(row.expiresAt);
    const lastUsedAt = epochMs(row.lastUsedAt);
    if (expiresAt !== null && expiresAt <= now) throw SESSION_ERRORS.apiKeyExpired();
    if (lastUsedAt === null || now - lastUsedAt > LAST_USED_WRITE_INTERVAL_MS) {
      // Throttled: at most one write per key per interval, off the request's critical path.
      touchApiKeyLastUsed(em, row.id, new Date(now), new Date(now - LAST_USED_WRITE_INTERVAL_MS))
        .catch((err: unknown) => this.logger.warn({ err, apiKeyId: row.id }, 'could not record API key use'));
    }
    return { kind: 'api_key', tenantId: tenant.id, apiKeyId: row.id, environment: row.environment };
  }
}

/**
 * The principal of an access token from its session check: the token must verify, belong to the
 * route's tenant, and its session and user must be live (an ended session fails at once).
 */
function authenticateAccessToken(tenant: Tenant, token: string, check: SessionCheck | undefined): UserPrincipal {
  // The tenant middleware checks every request's token before this runs; another token is not checked.
  if (!check || check.token !== token) throw SESSION_ERRORS.invalidAccessToken();
  if (!check.verified) {
    throw check.reason === 'token_expired' ? SESSION_ERRORS.accessTokenExpired() : SESSION_ERRORS.invalidAccessToken();
  }
  const { claims, row } = check;
  if (claims.tid !== tenant.id) throw SESSION_ERRORS.tenantMismatch();
  if (!row || row.revokedAt || row.userDeletedAt) throw SESSION_ERRORS.sessionRevoked();
  assertMaySignIn(row.status);
  return { kind: 'user', tenantId: tenant.id, userId: row.userId, sessionId: claims.sid, role: row.role };
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
function bearerToken(authorization: string | undefined): string | undefined {
  const match = authorization ? /^Bearer[ \t]+(\S{1,4096})[ \t]*$/i.exec(authorization) : null;
  return match?.[1];
}

function isApiKey(token: string): boolean {
  return API_KEY_PREFIXES.some((p) => token.startsWith(p));
}
