import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Tenant } from '../entities/tenant.js';
import type { UserRole } from '../entities/user.js';
import { unauthorized } from '../lib/errors.js';
import { verifyAccessToken } from '../security/access-token.js';
import { sha256Hex } from '../security/tokens.js';

/** Plaintext API keys start with one of these (SPEC.md part 5.5). */
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
}

export type Principal = UserPrincipal | ApiKeyPrincipal;

interface SessionUserRow {
  user_id: string;
  role: UserRole;
  status: string;
  user_deleted_at: Date | null;
  revoked_at: Date | null;
}

/** Raw rows may carry timestamps as `Date` or as text depending on the driver's type parsing. */
interface ApiKeyRow {
  id: string;
  tenant_id: string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  last_used_at: Date | string | null;
}

/** Milliseconds since the epoch of a raw timestamp column, or null. */
function epochMs(value: Date | string | null): number | null {
  return value === null ? null : new Date(value).getTime();
}

/** How often at most `api_key.last_used_at` is written for one key, in milliseconds. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/**
 * Resolves the bearer credential of a request (SPEC.md part 5) to a principal of the route's tenant.
 * Access tokens are checked against their session on every request, so an ended session fails at once.
 */
export class CredentialService {
  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  /**
   * @param authorization the raw `Authorization` header.
   * @throws ApiError 401 `missing_credential`, `invalid_token`, `token_expired`, `tenant_mismatch`,
   *   `session_revoked`, `user_suspended`, `email_not_verified` (a `Pending` user's session works once
   *   the address is verified), `api_key_revoked`, `api_key_expired`.
   */
  async authenticate(em: EntityManager, tenant: Tenant, authorization: string | undefined): Promise<Principal> {
    const match = authorization ? /^Bearer[ \t]+(\S{1,4096})[ \t]*$/i.exec(authorization) : null;
    if (!match) throw unauthorized('missing_credential', 'A bearer token is required');
    const token = match[1]!;
    if (API_KEY_PREFIXES.some((p) => token.startsWith(p))) return this.authenticateApiKey(em, tenant, token);
    return this.authenticateAccessToken(em, tenant, token);
  }

  private async authenticateAccessToken(em: EntityManager, tenant: Tenant, token: string): Promise<UserPrincipal> {
    const verified = verifyAccessToken(token, this.config.jwtSecret);
    if (!verified.ok) {
      throw unauthorized(verified.reason, verified.reason === 'token_expired' ? 'The access token has expired' : 'The access token is not valid');
    }
    const { claims } = verified;
    if (claims.tid !== tenant.id) throw unauthorized('tenant_mismatch', 'The token belongs to another tenant');
    const rows = (await em.execute(
      `select u.id as user_id, u.role, u.status, u.deleted_at as user_deleted_at, s.revoked_at
         from session s join app_user u on u.id = s.user_id
        where s.id = ? and s.tenant_id = ? and s.user_id = ?`,
      [claims.sid, tenant.id, claims.sub],
    )) as SessionUserRow[];
    const row = rows[0];
    if (!row || row.revoked_at || row.user_deleted_at) throw unauthorized('session_revoked', 'The session has ended');
    if (row.status === 'Suspended') throw unauthorized('user_suspended', 'The account is suspended');
    if (row.status === 'Pending') throw unauthorized('email_not_verified', 'The email address is not verified yet');
    return { kind: 'user', tenantId: tenant.id, userId: row.user_id, sessionId: claims.sid, role: row.role };
  }

  private async authenticateApiKey(em: EntityManager, tenant: Tenant, token: string): Promise<ApiKeyPrincipal> {
    const rows = (await em.execute(
      'select id, tenant_id, expires_at, revoked_at, last_used_at from api_key where key_hash = ?',
      [sha256Hex(token)],
    )) as ApiKeyRow[];
    const row = rows[0];
    if (!row) throw unauthorized('invalid_token', 'The API key is not valid');
    if (row.tenant_id !== tenant.id) throw unauthorized('tenant_mismatch', 'The API key belongs to another tenant');
    if (row.revoked_at) throw unauthorized('api_key_revoked', 'The API key has been revoked');
    const now = Date.now();
    const expiresAt = epochMs(row.expires_at);
    const lastUsedAt = epochMs(row.last_used_at);
    if (expiresAt !== null && expiresAt <= now) throw unauthorized('api_key_expired', 'The API key has expired');
    if (lastUsedAt === null || now - lastUsedAt > LAST_USED_WRITE_INTERVAL_MS) {
      // Throttled: at most one write per key per interval, off the request's critical path.
      em
        .execute(
          `update api_key set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)`,
          [new Date(now), row.id, new Date(now - LAST_USED_WRITE_INTERVAL_MS)],
        )
        .catch((err: unknown) => this.logger.warn({ err, apiKeyId: row.id }, 'could not record API key use'));
    }
    return { kind: 'api_key', tenantId: tenant.id, apiKeyId: row.id };
  }
}
