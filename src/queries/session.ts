import type { Locale } from '../lib/locales.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { SessionSchema, type Session } from '../entities/session.js';
import { TenantSchema } from '../entities/tenant.js';
import { UserSchema } from '../entities/user.js';
import { queryPooledArrays } from '../db/pooled-query.js';

/**
 * The queries of the `session` table (docs/architecture.md "Rules", data access). A statement that
 * starts at a session and reads its tenant and user (the one query of an authenticated request) or
 * starts a session together with its first refresh token lives here; the refresh-token rotation is
 * in `src/queries/refresh-token.ts`. Each function takes the caller's entity manager (pass the
 * transaction when it must run in one; the caller owns it); every statement is scoped by tenant id.
 */

/** The statement of {@link findTenantWithSession} and the columns it reads, in order. */
interface TenantWithSessionStatement {
  text: string;
  tenantColumns: string[];
  userColumns: string[];
}

/** The statement per ORM metadata (the columns are listed once, from the entities). */
const statements = new WeakMap<object, TenantWithSessionStatement>();

function tenantWithSessionStatement(em: EntityManager): TenantWithSessionStatement {
  const metadata = em.getMetadata();
  let statement = statements.get(metadata);
  if (!statement) {
    const columnsOf = (className: string) => metadata.get(className).props.flatMap((p) => p.fieldNames ?? []);
    const tenantColumns = columnsOf(TenantSchema.meta.className);
    const userColumns = columnsOf(UserSchema.meta.className);
    const text = `select ${tenantColumns.map((c) => `t.${c}`).join(', ')}, s.id is not null, s.revoked_at, ${userColumns.map((c) => `u.${c}`).join(', ')}
              from tenant t
              left join session s on s.id = $1 and s.tenant_id = t.id and s.user_id = $2
              left join app_user u on u.id = s.user_id
             where t.slug = $3 and t.deleted_at is null`;
    statement = { text, tenantColumns, userColumns };
    statements.set(metadata, statement);
  }
  return statement;
}

/** A tenant with the session of an access token and that session's user, as column maps (snake_case names). */
export interface TenantWithSessionRow {
  tenant: Record<string, unknown>;
  /** Undefined when no session of that id and user exists in the tenant (revoked or not). */
  session: { revokedAt: Date | null; user: Record<string, unknown> } | undefined;
}

/**
 * The one query of an authenticated request (docs/architecture.md, "GET me"): the live tenant of
 * `slug`, with the session `sessionId` of user `userId` in that tenant and the user's columns when
 * such a session exists. Sent to `pg` directly on a pooled connection (see queryPooled), its row read
 * by position: it runs on every authenticated request.
 * @returns the tenant's and user's columns, or undefined for an unknown or deleted tenant.
 */
export async function findTenantWithSession(
  em: EntityManager,
  slug: string,
  sessionId: string,
  userId: string,
): Promise<TenantWithSessionRow | undefined> {
  const { text, tenantColumns, userColumns } = tenantWithSessionStatement(em);
  const [row] = await queryPooledArrays(em, text, [sessionId, userId, slug]);
  if (!row) return undefined;
  const tenant: Record<string, unknown> = {};
  for (let i = 0; i < tenantColumns.length; i += 1) tenant[tenantColumns[i]!] = row[i];
  const at = tenantColumns.length;
  if (!row[at]) return { tenant, session: undefined };
  const user: Record<string, unknown> = {};
  for (let i = 0; i < userColumns.length; i += 1) user[userColumns[i]!] = row[at + 2 + i];
  return { tenant, session: { revokedAt: row[at + 1] as Date | null, user } };
}

/** What a new session row and its first refresh token hold. */
export interface NewSession extends Pick<Session, 'id' | 'tenantId' | 'userId' | 'ip' | 'userAgent'> {
  /** How the user was authenticated (at most 32 characters; longer values are cut). */
  method: string;
  /** `created_at` and `authenticated_at` of the session, `created_at` of the token, the user's `last_login_at`. */
  now: Date;
  /** The page language of the sign-in (RequestMeta.locale), kept as the user's `locale`; undefined keeps theirs. */
  locale?: Locale;
  firstToken: { id: string; tokenHash: string; expiresAt: Date };
}

/**
 * Inserts a session, its first refresh token and stamps the user's `last_login_at` (and `locale`
 * when the sign-in named one), in one round
 * trip (one statement; the foreign key of refresh_token is checked at its end, when the session row
 * exists). Call inside the transaction of the sign-in it belongs to.
 */
export async function insertSessionWithFirstToken(em: EntityManager, session: NewSession): Promise<void> {
  const { now, firstToken } = session;
  await em.execute(
    `with new_session as (
         insert into session (id, tenant_id, user_id, created_at, authenticated_at, revoked_at, revoked_reason, ip, user_agent, method)
         values (?, ?, ?, ?, ?, null, null, ?, ?, ?)
       ), first_token as (
         insert into refresh_token (id, session_id, tenant_id, token_hash, parent_id, created_at, expires_at, rotated_at)
         values (?, ?, ?, ?, null, ?, ?, null)
       )
       update app_user set last_login_at = ?, locale = coalesce(?, locale) where tenant_id = ? and id = ?`,
    [
      session.id, session.tenantId, session.userId, now, now, session.ip, session.userAgent, session.method.slice(0, 32),
      firstToken.id, session.id, session.tenantId, firstToken.tokenHash, now, firstToken.expiresAt,
      now, session.locale ?? null, session.tenantId, session.userId,
    ],
    'run',
  );
}

/**
 * Ends one live session of the tenant (`revoked_at` now, `revoked_reason`); with `ownerId`, only
 * when it belongs to that user.
 * @returns false when it had already ended (or is not that owner's).
 */
export async function revokeLiveSession(em: EntityManager, tenantId: string, sessionId: string, reason: string, ownerId?: string): Promise<boolean> {
  const updated = await em.nativeUpdate(
    SessionSchema,
    { id: sessionId, tenantId, revokedAt: null, ...(ownerId === undefined ? {} : { userId: ownerId }) },
    { revokedAt: new Date(), revokedReason: reason },
  );
  return updated > 0;
}

/**
 * Ends every live session of a user of the tenant but `exceptSessionId`.
 * @returns the ids of the sessions ended.
 */
export async function revokeLiveSessionsOfUser(em: EntityManager, tenantId: string, userId: string, reason: string, exceptSessionId?: string): Promise<string[]> {
  const rows = (await em.execute(
    `update session set revoked_at = ?, revoked_reason = ?
        where tenant_id = ? and user_id = ? and revoked_at is null and id <> ?
        returning id`,
    [new Date(), reason, tenantId, userId, exceptSessionId ?? '00000000-0000-0000-0000-000000000000'],
  )) as { id: string }[];
  return rows.map((row) => row.id);
}

/**
 * Ends every live session of the tenant (`revoked_reason` `tenant_deleted`).
 * @returns the ids of the sessions ended.
 */
export async function revokeLiveSessionsOfTenant(em: EntityManager, tenantId: string, now: Date): Promise<string[]> {
  const rows = (await em.execute(
    `update session set revoked_at = ?, revoked_reason = 'tenant_deleted' where tenant_id = ? and revoked_at is null returning id`,
    [now, tenantId],
  )) as { id: string }[];
  return rows.map((row) => row.id);
}

/** A live session as the session list shows it. */
export type LiveSessionRow = Pick<Session, 'id' | 'createdAt' | 'ip' | 'userAgent' | 'method'> & {
  /** When the session was last refreshed: the creation of its newest refresh token; null when never refreshed. */
  lastRefreshedAt: Date | null;
};

/**
 * The last refresh of session `s`: its newest successor token's creation (a session's first token
 * has no parent). Read, not stored: a refresh writes no session row (docs/performance.md "The refresh
 * path"); `refresh_token_session_idx` finds the tokens of one session.
 */
const LAST_REFRESHED_AT = '(select max(rt.created_at) from refresh_token rt where rt.session_id = s.id and rt.parent_id is not null) as last_refreshed_at';

/** The live sessions of a user of the tenant, newest first. */
export async function findLiveSessionsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<LiveSessionRow[]> {
  const rows = (await em.execute(
    `select s.id, s.created_at, ${LAST_REFRESHED_AT}, s.ip, s.user_agent, s.method from session s
        where s.tenant_id = ? and s.user_id = ? and s.revoked_at is null order by s.created_at desc, s.id`,
    [tenantId, userId],
  )) as { id: string; created_at: Date; last_refreshed_at: Date | null; ip: string | null; user_agent: string | null; method: string | null }[];
  return rows.map((row) => ({
    id: row.id, createdAt: row.created_at, lastRefreshedAt: row.last_refreshed_at, ip: row.ip, userAgent: row.user_agent, method: row.method,
  }));
}

/** Every session of a user of the tenant, ended ones included, oldest first (the data export). */
export type ExportedSessionRow = LiveSessionRow & Pick<Session, 'revokedAt' | 'revokedReason'>;

/** {@link ExportedSessionRow}s of a user of the tenant, oldest first. */
export async function findSessionsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<ExportedSessionRow[]> {
  const rows = (await em.execute(
    `select s.id, s.created_at, ${LAST_REFRESHED_AT}, s.revoked_at, s.revoked_reason, s.ip, s.user_agent, s.method
         from session s where s.tenant_id = ? and s.user_id = ? order by s.created_at, s.id`,
    [tenantId, userId],
  )) as {
    id: string; created_at: Date; last_refreshed_at: Date | null; revoked_at: Date | null; revoked_reason: string | null;
    ip: string | null; user_agent: string | null; method: string | null;
  }[];
  return rows.map((row) => ({
    id: row.id, createdAt: row.created_at, lastRefreshedAt: row.last_refreshed_at, revokedAt: row.revoked_at, revokedReason: row.revoked_reason,
    ip: row.ip, userAgent: row.user_agent, method: row.method,
  }));
}

/** When and how a live session of the tenant was authenticated; undefined for an ended or unknown session. */
export async function findLiveSessionAuthentication(
  em: EntityManager,
  tenantId: string,
  sessionId: string,
): Promise<Pick<Session, 'authenticatedAt' | 'createdAt' | 'method'> | undefined> {
  const rows = (await em.execute(
    'select authenticated_at, created_at, method from session where id = ? and tenant_id = ? and revoked_at is null',
    [sessionId, tenantId],
  )) as { authenticated_at: Date | null; created_at: Date; method: string | null }[];
  const row = rows[0];
  return row ? { authenticatedAt: row.authenticated_at, createdAt: row.created_at, method: row.method } : undefined;
}

/**
 * When and how a live session of the tenant was authenticated, and whether `refreshTokenHash` is the
 * SHA-256 of its current refresh token (not rotated, not expired at `now`), in one statement (it
 * reads `refresh_token` too): finishing an OpenID Provider sign-in (docs/oidc.md "Sign-in").
 * @param refreshTokenHash null when no refresh token was presented (`holdsRefreshToken` is then false).
 * @returns undefined for an ended or unknown session.
 */
export async function findLiveSessionAuthenticationWithToken(
  em: EntityManager,
  tenantId: string,
  sessionId: string,
  refreshTokenHash: string | null,
  now: Date,
): Promise<(Pick<Session, 'authenticatedAt' | 'createdAt' | 'method'> & { holdsRefreshToken: boolean }) | undefined> {
  const rows = (await em.execute(
    `select s.authenticated_at, s.created_at, s.method,
            exists (select 1 from refresh_token rt
                     where rt.token_hash = ? and rt.tenant_id = s.tenant_id and rt.session_id = s.id
                       and rt.rotated_at is null and rt.expires_at > ?) as holds_refresh_token
       from session s
      where s.id = ? and s.tenant_id = ? and s.revoked_at is null`,
    [refreshTokenHash, now, sessionId, tenantId],
  )) as { authenticated_at: Date | null; created_at: Date; method: string | null; holds_refresh_token: boolean }[];
  const row = rows[0];
  return row
    ? { authenticatedAt: row.authenticated_at, createdAt: row.created_at, method: row.method, holdsRefreshToken: row.holds_refresh_token === true }
    : undefined;
}

/** `authenticated_at` of a live session of this user of the tenant (null for old sessions); undefined when there is none. */
export async function findLiveSessionAuthenticatedAt(
  em: EntityManager,
  tenantId: string,
  userId: string,
  sessionId: string,
): Promise<Pick<Session, 'authenticatedAt'> | undefined> {
  const rows = (await em.execute(
    'select authenticated_at from session where id = ? and tenant_id = ? and user_id = ? and revoked_at is null',
    [sessionId, tenantId, userId],
  )) as { authenticated_at: Date | null }[];
  return rows[0] ? { authenticatedAt: rows[0].authenticated_at } : undefined;
}
