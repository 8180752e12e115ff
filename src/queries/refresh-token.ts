import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPooled } from '../db/pooled-query.js';
import type { RefreshToken } from '../entities/refresh-token.js';
import type { Session } from '../entities/session.js';
import type { Tenant } from '../entities/tenant.js';
import type { User } from '../entities/user.js';

/**
 * The queries of the `refresh_token` table (docs/architecture.md "Rules", data access): the
 * rotation and the look-ups of a presented token, which join its session and user. The first token
 * of a session is inserted with the session (`src/queries/session.ts`). Each function takes the caller's
 * entity manager (pass the transaction when it must run in one; the caller owns it); every statement
 * is scoped by tenant id.
 */

/** The workspace a rotation found by its slug: what issuing the successor needs of it. */
export type RotationTenant = Pick<Tenant, 'id' | 'refreshTokenLifetimeSeconds'>;

/** The user a session answer names (the `Session` schema's `user`). */
export type SessionUser = Pick<User, 'id' | 'email' | 'role' | 'status'>;

/** What a rotation did: nothing (`undefined`), or the session rotated, its workspace and its live owner (null when deleted or suspended). */
export interface Rotation {
  sessionId: string;
  tenant: RotationTenant;
  owner: SessionUser | null;
}

/** The successor a rotation issues; it expires `tenant.refreshTokenLifetimeSeconds` after `now`. */
export type Successor = Pick<RefreshToken, 'id' | 'tokenHash'>;

const ROTATE_BY_SLUG = `
  with workspace as (
         select id, refresh_token_lifetime_seconds from tenant where slug = $1 and deleted_at is null
       ), rotated as (
         update refresh_token rt set rotated_at = $2
           from session s, workspace w
          where rt.token_hash = $3 and rt.tenant_id = w.id and rt.rotated_at is null and rt.expires_at > $2
            and s.id = rt.session_id and s.revoked_at is null
            -- a Pending user's token is not spent: it works once the address is verified
            and not exists (select 1 from app_user pu where pu.id = s.user_id and pu.status = 'Pending')
         returning rt.id, rt.session_id, s.user_id, w.id as tenant_id, w.refresh_token_lifetime_seconds
       ), owner as (
         select u.id, u.email, u.role, u.status from app_user u join rotated r on u.id = r.user_id and u.tenant_id = r.tenant_id
          where u.deleted_at is null and u.status <> 'Suspended'
       ), issued as (
         insert into refresh_token (id, session_id, tenant_id, token_hash, parent_id, created_at, expires_at, rotated_at)
         select $4, r.session_id, r.tenant_id, $5, r.id, $2, $2 + make_interval(secs => r.refresh_token_lifetime_seconds), null
           from rotated r where exists (select 1 from owner)
         returning session_id
       )
  select r.session_id, r.tenant_id, r.refresh_token_lifetime_seconds, o.id as user_id, o.email, o.role, o.status
    from rotated r left join owner o on true`;

/**
 * One statement, one round trip, the whole refresh (docs/performance.md "The refresh path"): finds
 * the live workspace of `tenantSlug`, rotates the token of `tokenHash` there (the conditional UPDATE
 * is the lock that lets exactly one of two concurrent exchanges win; a Pending user's token is not
 * spent), reads its live owner, and only then issues `successor` (expiring the workspace's
 * `refresh_token_lifetime_seconds` after `now`; its creation is the session's last refresh). A
 * statement is atomic on its own; in the caller's transaction when `em` has one. Sent to `pg` as
 * written (queryPooled): it runs on every refresh.
 * @returns undefined when nothing was rotated (unknown workspace or token, used or expired token,
 *   ended session or Pending user): the caller explains which.
 */
export async function rotateRefreshToken(em: EntityManager, tenantSlug: string, tokenHash: string, successor: Successor, now: Date): Promise<Rotation | undefined> {
  const rows = await queryPooled<{
    session_id: string; tenant_id: string; refresh_token_lifetime_seconds: number;
    user_id: string | null; email: string | null; role: User['role'] | null; status: User['status'] | null;
  }>(em, ROTATE_BY_SLUG, [tenantSlug, now, tokenHash, successor.id, successor.tokenHash]);
  const row = rows[0];
  if (!row) return undefined;
  const tenant = { id: row.tenant_id, refreshTokenLifetimeSeconds: row.refresh_token_lifetime_seconds };
  const owner = row.user_id !== null && row.email !== null && row.role !== null && row.status !== null
    ? { id: row.user_id, email: row.email, role: row.role, status: row.status }
    : null;
  return { sessionId: row.session_id, tenant, owner };
}

/** A presented refresh token with its session and user, to explain why it was not rotated. */
export interface PresentedToken extends Pick<RefreshToken, 'id' | 'sessionId' | 'rotatedAt' | 'expiresAt'>, Pick<Session, 'userId' | 'revokedAt'> {
  userStatus: User['status'];
}

/** The refresh token of `tokenHash` in the tenant, with its session and user; undefined when unknown. */
export async function findPresentedToken(em: EntityManager, tenantId: string, tokenHash: string): Promise<PresentedToken | undefined> {
  const rows = (await em.execute(
    `select rt.id, rt.session_id, s.user_id, rt.rotated_at, rt.expires_at, s.revoked_at, u.status as user_status
         from refresh_token rt join session s on s.id = rt.session_id join app_user u on u.id = s.user_id
        where rt.token_hash = ? and rt.tenant_id = ?`,
    [tokenHash, tenantId],
  )) as {
    id: string; session_id: string; user_id: string; rotated_at: Date | null; expires_at: Date; revoked_at: Date | null; user_status: User['status'];
  }[];
  const row = rows[0];
  return row
    ? {
        id: row.id, sessionId: row.session_id, userId: row.user_id, rotatedAt: row.rotated_at, expiresAt: row.expires_at,
        revokedAt: row.revoked_at, userStatus: row.user_status,
      }
    : undefined;
}

/** The live session (id and user) the refresh token of `tokenHash` belongs to in the tenant, or undefined. */
export async function findLiveSessionOfToken(em: EntityManager, tenantId: string, tokenHash: string): Promise<Pick<Session, 'id' | 'userId'> | undefined> {
  const rows = (await em.execute(
    `select s.id, s.user_id from refresh_token rt join session s on s.id = rt.session_id
        where rt.token_hash = ? and rt.tenant_id = ? and s.revoked_at is null`,
    [tokenHash, tenantId],
  )) as { id: string; user_id: string }[];
  return rows[0] ? { id: rows[0].id, userId: rows[0].user_id } : undefined;
}
