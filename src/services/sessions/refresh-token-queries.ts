import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../../db/rows.js';
import type { RefreshToken } from '../../entities/refresh-token.js';
import type { Session } from '../../entities/session.js';
import { UserSchema, type User } from '../../entities/user.js';

/**
 * The queries of the `refresh_token` table (docs/architecture.md "Rules", data access): the
 * rotation and the look-ups of a presented token, which join its session and user. The first token
 * of a session is inserted with the session (`session-queries.ts`). Each function takes the caller's
 * entity manager (pass the transaction when it must run in one; the caller owns it); every statement
 * is scoped by tenant id.
 */

/** What a rotation did: nothing (`undefined`), or the session rotated and its live owner (null when deleted or suspended). */
export interface Rotation {
  sessionId: string;
  owner: User | null;
}

/** The successor a rotation issues. */
export type Successor = Pick<RefreshToken, 'id' | 'tokenHash' | 'expiresAt'>;

/**
 * One statement, one round trip: rotates the token of `tokenHash` (the conditional UPDATE is the
 * lock that lets exactly one of two concurrent exchanges win; a Pending user's token is not spent),
 * reads its live owner, and only then issues `successor` and stamps the session's
 * `last_refreshed_at`. A statement is atomic on its own.
 * @returns undefined when nothing was rotated (unknown, used, expired token, ended session or Pending user).
 */
export async function rotateRefreshToken(em: EntityManager, tenantId: string, tokenHash: string, successor: Successor, now: Date): Promise<Rotation | undefined> {
  const rows = (await em.execute(
    `with rotated as (
         update refresh_token rt set rotated_at = ?
           from session s
          where rt.token_hash = ? and rt.tenant_id = ? and rt.rotated_at is null and rt.expires_at > ?
            and s.id = rt.session_id and s.revoked_at is null
            -- a Pending user's token is not spent: it works once the address is verified
            and not exists (select 1 from app_user pu where pu.id = s.user_id and pu.status = 'Pending')
         returning rt.id, rt.session_id, s.user_id
       ), owner as (
         select u.* from app_user u join rotated r on u.id = r.user_id
          where u.tenant_id = ? and u.deleted_at is null and u.status <> 'Suspended'
       ), issued as (
         insert into refresh_token (id, session_id, tenant_id, token_hash, parent_id, created_at, expires_at, rotated_at)
         select ?, r.session_id, ?, ?, r.id, ?, ?, null from rotated r where exists (select 1 from owner)
         returning session_id
       ), touched as (
         update session set last_refreshed_at = ? where id in (select session_id from issued)
       )
       select o.*, r.session_id as rotated_session_id from rotated r left join owner o on true`,
    [
      now, tokenHash, tenantId, now,
      tenantId,
      successor.id, tenantId, successor.tokenHash, now, successor.expiresAt,
      now,
    ],
  )) as (Record<string, unknown> & { rotated_session_id: string; id: string | null })[];
  const row = rows[0];
  if (!row) return undefined;
  const { rotated_session_id: sessionId, ...userRow } = row;
  return { sessionId, owner: userRow.id ? rowToEntity(em, UserSchema, userRow) : null };
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

/**
 * Whether `tokenHash` is the current (not rotated, not expired) refresh token of the live session
 * `sessionId` of the tenant.
 */
export async function isCurrentTokenOfSession(em: EntityManager, tenantId: string, sessionId: string, tokenHash: string, now: Date): Promise<boolean> {
  const rows = (await em.execute(
    `select 1 from refresh_token rt join session s on s.id = rt.session_id
        where rt.token_hash = ? and rt.tenant_id = ? and rt.session_id = ? and rt.rotated_at is null and rt.expires_at > ? and s.revoked_at is null`,
    [tokenHash, tenantId, sessionId, now],
  )) as unknown[];
  return rows.length > 0;
}
