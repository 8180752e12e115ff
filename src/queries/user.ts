import type { Locale } from '../lib/locales.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { executeWithArrays } from '../db/pooled-query.js';
import { rowToEntity } from '../db/rows.js';
import { UserSchema, type User, type UserRole, type UserStatus } from '../entities/user.js';
import { normalizeEmail } from '../lib/email.js';
import type { ProfileChange } from '../lib/profile.js';

/**
 * The queries of the `app_user` table (docs/architecture.md "Rules", data access): every statement
 * that reads or writes a user row is here, and every flow calls these functions. A statement that writes another table first and
 * touches the user on the way (a new session stamping `last_login_at`) lives with that table.
 *
 * Each function takes the caller's entity manager: pass the transaction (`tx`) when it must run in
 * one; the caller owns it. Every statement is scoped by tenant id, except the erasure sweep's
 * selection, which crosses tenants on purpose. Rows come back as `User` values (detached, mapped by
 * `db/rows.ts`) or as a `Pick` of it.
 */

function toUser(em: EntityManager, rows: Record<string, unknown>[]): User | null {
  return rows[0] ? rowToEntity(em, UserSchema, rows[0]) : null;
}

/** Inserts a new user row (see `entities/new-user.ts` for building it). */
export async function insertUser(em: EntityManager, user: User): Promise<void> {
  await em.insert(UserSchema, user);
}

/**
 * The one look-up of a user by email: the live (not soft-deleted) user of `tenantId` whose address
 * is `email` after normalisation (trimmed, lower-cased; see docs/decisions.md), or null. Used by
 * sign-in, MFA sign-in, email verification, password reset and the external provider's email match.
 * Plain SQL mapped to a detached value: no query building and no entity-manager fork per call.
 */
export async function findLiveUserByEmail(em: EntityManager, tenantId: string, email: string): Promise<User | null> {
  const rows = await em.execute<Record<string, unknown>[]>(
    'select * from app_user where tenant_id = ? and email = ? and deleted_at is null',
    [tenantId, normalizeEmail(email)],
  );
  return toUser(em, rows);
}

/**
 * The live (not soft-deleted) user of `tenantId` with this id, or null; the tenant scope is part of
 * the query, so an id of another tenant finds nothing. The read of GET /me (a hot path: plain SQL).
 */
export async function findLiveUserById(em: EntityManager, tenantId: string, userId: string): Promise<User | null> {
  const rows = await em.execute<Record<string, unknown>[]>('select * from app_user where id = ? and tenant_id = ? and deleted_at is null', [
    userId,
    tenantId,
  ]);
  return toUser(em, rows);
}

/** The tenant's live (not soft-deleted) users among these ids, in no particular order; other tenants' ids find nothing. */
export async function findLiveUsersByIds(em: EntityManager, tenantId: string, userIds: string[]): Promise<User[]> {
  if (userIds.length === 0) return [];
  const rows = await em.execute<Record<string, unknown>[]>('select * from app_user where tenant_id = ? and id in (?) and deleted_at is null', [tenantId, userIds]);
  return rows.map((row) => rowToEntity(em, UserSchema, row));
}

/** The user of `tenantId` with this id, live or soft-deleted, or null. */
export async function findUserById(em: EntityManager, tenantId: string, userId: string): Promise<User | null> {
  return em.findOne(UserSchema, { id: userId, tenantId }, { disableIdentityMap: true });
}

/** The email address of a user of the tenant (live or soft-deleted), or undefined. */
export async function findUserEmail(em: EntityManager, tenantId: string, userId: string): Promise<string | undefined> {
  const rows = (await em.execute('select email from app_user where id = ? and tenant_id = ?', [userId, tenantId])) as { email: string }[];
  return rows[0]?.email;
}

/** How many live users of the tenant have this (already normalised) address: 0 or 1. */
export async function countLiveUsersWithEmail(em: EntityManager, tenantId: string, email: string): Promise<number> {
  return em.count(UserSchema, { tenantId, email, deletedAt: null });
}

/**
 * Locks (`FOR UPDATE`, in id order) the tenant's active, live Admins and returns their ids: the
 * lock that keeps two concurrent demotions, suspensions or deletions from removing the last two.
 * Call inside the caller's transaction.
 */
export async function lockActiveAdminIds(tx: EntityManager, tenantId: string): Promise<string[]> {
  const rows = (await tx.execute(
    `select id from app_user where tenant_id = ? and role = 'Admin' and status = 'Active' and deleted_at is null order by id for update`,
    [tenantId],
  )) as { id: string }[];
  return rows.map((row) => row.id);
}

/** Locks (`FOR UPDATE`) and returns the live user, or null. Call inside the caller's transaction. */
export async function lockLiveUser(tx: EntityManager, tenantId: string, userId: string): Promise<User | null> {
  const rows = (await tx.execute('select * from app_user where id = ? and tenant_id = ? and deleted_at is null for update', [userId, tenantId])) as Record<
    string,
    unknown
  >[];
  return toUser(tx, rows);
}

/** Locks (`FOR UPDATE`) and returns the soft-deleted user, or null. Call inside the caller's transaction. */
export async function lockDeletedUser(tx: EntityManager, tenantId: string, userId: string): Promise<User | null> {
  const rows = (await tx.execute('select * from app_user where id = ? and tenant_id = ? and deleted_at is not null for update', [userId, tenantId])) as Record<
    string,
    unknown
  >[];
  return toUser(tx, rows);
}

/**
 * Locks (`FOR UPDATE`, so it waits for a concurrent reset or takeover to commit) a live user that
 * is not suspended and returns the stored password hash (null without a password); undefined when
 * there is no such user.
 */
export async function lockSignInPasswordHash(tx: EntityManager, tenantId: string, userId: string): Promise<Pick<User, 'passwordHash'> | undefined> {
  const rows = (await tx.execute(
    `select password_hash from app_user where id = ? and tenant_id = ? and deleted_at is null and status <> 'Suspended' for update`,
    [userId, tenantId],
  )) as { password_hash: string | null }[];
  return rows[0] ? { passwordHash: rows[0].password_hash } : undefined;
}

/** When the live user's address was verified (null when not yet), or undefined for no live user. */
export async function findLiveEmailVerifiedAt(em: EntityManager, tenantId: string, userId: string): Promise<Pick<User, 'emailVerifiedAt'> | undefined> {
  const rows = (await em.execute('select email_verified_at from app_user where id = ? and tenant_id = ? and deleted_at is null', [userId, tenantId])) as {
    email_verified_at: Date | null;
  }[];
  return rows[0] ? { emailVerifiedAt: rows[0].email_verified_at } : undefined;
}

/**
 * The account the tenant's OpenID Provider signs in as subject `sub` (the user id as text): a live,
 * `Active` user of the tenant, or undefined.
 */
export async function findActiveAccount(
  em: EntityManager, tenantId: string, sub: string,
): Promise<Pick<User, 'id' | 'email' | 'emailVerifiedAt' | 'customData' | 'name' | 'picture'> | undefined> {
  const rows = (await em.execute(
    `select id, email, email_verified_at, custom_data, name, picture from app_user
            where tenant_id = ? and id::text = ? and deleted_at is null and status = 'Active'`,
    [tenantId, sub],
  )) as { id: string; email: string; email_verified_at: Date | null; custom_data: Record<string, unknown> | string; name: string | null; picture: string | null }[];
  const row = rows[0];
  if (!row) return undefined;
  const customData = typeof row.custom_data === 'string' ? (JSON.parse(row.custom_data) as Record<string, unknown>) : row.custom_data;
  return { id: row.id, email: row.email, emailVerifiedAt: row.email_verified_at, customData, name: row.name, picture: row.picture };
}

/** Where and in which language mail to a person goes. */
export type MailRecipient = Pick<User, 'email' | 'locale'>;

/** The addresses (and languages) of the tenant's live Admins, whatever their status (for operational mail). */
export async function findAdminRecipients(em: EntityManager, tenantId: string): Promise<MailRecipient[]> {
  const rows = await em.execute<{ email: string; locale: Locale | null }[]>(
    `select email, locale from app_user where tenant_id = ? and role = 'Admin' and deleted_at is null`,
    [tenantId],
  );
  return rows.map((row) => ({ email: row.email, locale: row.locale }));
}

/** The addresses (and languages) of the tenant's live, `Active` Admins. */
export async function findActiveAdminRecipients(em: EntityManager, tenantId: string): Promise<MailRecipient[]> {
  const rows = await em.execute<{ email: string; locale: Locale | null }[]>(
    `select email, locale from app_user where tenant_id = ? and role = 'Admin' and status = 'Active' and deleted_at is null`,
    [tenantId],
  );
  return rows.map((row) => ({ email: row.email, locale: row.locale }));
}

/**
 * Every address the tenant holds of a person: its users' (deleted ones included) and its
 * invitees' (the `invite` table is read here too, as one statement).
 */
export async function findTenantPeopleEmails(em: EntityManager, tenantId: string): Promise<string[]> {
  const rows = await em.execute<{ email: string }[]>(
    'select email from app_user where tenant_id = ? union select email from invite where tenant_id = ?',
    [tenantId, tenantId],
  );
  return rows.map((row) => row.email);
}

/** The user's row as the data export shows it (any state), with whether TOTP is active; undefined when absent. */
export interface UserExportRow extends Pick<
  User,
  | 'id' | 'email' | 'status' | 'role' | 'createdAt' | 'updatedAt' | 'lastLoginAt' | 'emailVerifiedAt' | 'deletedAt' | 'totpEnrolledAt' | 'locale'
  | 'name' | 'picture' | 'customData' | 'importedAt'
> {
  totpActive: boolean;
  /** Whether the user has a password (the hash itself is never read). */
  passwordSet: boolean;
}

/**
 * The user of the tenant (live or soft-deleted) for the data export, or undefined: every personal
 * column of the row, none of its secrets (no password hash, TOTP secret or step: only whether they exist).
 */
export async function findUserForExport(em: EntityManager, tenantId: string, userId: string): Promise<UserExportRow | undefined> {
  const rows = (await em.execute(
    `select id, email, status, role, created_at, updated_at, last_login_at, email_verified_at, deleted_at, locale, name, picture,
              custom_data, imported_at, (password_hash is not null) as password_set,
              totp_enrolled_at, (totp_secret_enc is not null and totp_enrolled_at is not null) as totp_active
         from app_user where id = ? and tenant_id = ?`,
    [userId, tenantId],
  )) as {
    id: string; email: string; status: UserStatus; role: UserRole; created_at: Date; updated_at: Date; last_login_at: Date | null;
    email_verified_at: Date | null; deleted_at: Date | null; locale: Locale | null; totp_enrolled_at: Date | null; totp_active: boolean;
    name: string | null; picture: string | null; custom_data: Record<string, unknown> | null; imported_at: Date | null; password_set: boolean;
  }[];
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id, email: row.email, status: row.status, role: row.role, createdAt: row.created_at, updatedAt: row.updated_at,
    lastLoginAt: row.last_login_at, emailVerifiedAt: row.email_verified_at, deletedAt: row.deleted_at, totpEnrolledAt: row.totp_enrolled_at,
    totpActive: row.totp_active, locale: row.locale, name: row.name, picture: row.picture, customData: row.custom_data ?? {},
    importedAt: row.imported_at, passwordSet: row.password_set,
  };
}

/** Sets role and status of a user of the tenant, stamping `updated_at`. */
export async function updateRoleAndStatus(em: EntityManager, tenantId: string, userId: string, role: UserRole, status: UserStatus, now: Date): Promise<void> {
  await em.nativeUpdate(UserSchema, { id: userId, tenantId }, { role, status, updatedAt: now });
}

/** Sets the custom data (a JSON object) of a user of the tenant. */
export async function updateCustomData(em: EntityManager, tenantId: string, userId: string, customData: Record<string, unknown>, now: Date): Promise<void> {
  await em.execute('update app_user set custom_data = ?::jsonb, updated_at = ? where id = ? and tenant_id = ?', [JSON.stringify(customData), now, userId, tenantId]);
}

/**
 * Sets the profile fields of a user of the tenant that `change` names (a value sets, null clears,
 * absent leaves the column as it is), stamping `updated_at`.
 */
export async function updateProfile(em: EntityManager, tenantId: string, userId: string, change: ProfileChange, now: Date): Promise<void> {
  const fields: Partial<Pick<User, 'name' | 'picture' | 'updatedAt'>> = { updatedAt: now };
  if (change.name !== undefined) fields.name = change.name;
  if (change.picture !== undefined) fields.picture = change.picture;
  await em.nativeUpdate(UserSchema, { id: userId, tenantId }, fields);
}

/** Soft-deletes (`deleted_at` = `now`) a user of the tenant. */
export async function softDeleteUser(em: EntityManager, tenantId: string, userId: string, now: Date): Promise<void> {
  await em.nativeUpdate(UserSchema, { id: userId, tenantId }, { deletedAt: now, updatedAt: now });
}

/** Makes a soft-deleted user of the tenant live again. */
export async function restoreUser(em: EntityManager, tenantId: string, userId: string, now: Date): Promise<void> {
  await em.nativeUpdate(UserSchema, { id: userId, tenantId }, { deletedAt: null, updatedAt: now });
}

/**
 * Sets the password hash of a user of the tenant, stamping `updated_at`; with `liveOnly`, only while
 * the user is not soft-deleted.
 * @returns how many rows changed (0 or 1).
 */
export async function updatePasswordHash(em: EntityManager, tenantId: string, userId: string, passwordHash: string, liveOnly = false): Promise<number> {
  return em.nativeUpdate(UserSchema, { id: userId, tenantId, ...(liveOnly ? { deletedAt: null } : {}) }, { passwordHash, updatedAt: new Date() });
}

/**
 * Replaces the stored hash with a stronger one at sign-in (no `updated_at`: nothing changed for the
 * user), only while it is still `previousHash` (a reset or change that committed meanwhile wins). An
 * imported (foreign) hash is deleted this way (docs/import.md).
 * @returns true when the row was updated.
 */
export async function rehashPassword(em: EntityManager, tenantId: string, userId: string, previousHash: string, passwordHash: string): Promise<boolean> {
  return (await em.nativeUpdate(UserSchema, { id: userId, tenantId, passwordHash: previousHash }, { passwordHash })) === 1;
}

/**
 * Locks (`FOR UPDATE`) the user row and returns what the account-reclaim clears: whether a password
 * and a TOTP factor (active or pending) are set; undefined when there is no such user.
 */
export async function lockCredentialPresence(tx: EntityManager, tenantId: string, userId: string): Promise<{ hadPassword: boolean; hadTotp: boolean } | undefined> {
  const users = (await tx.execute(
    `select password_hash is not null as had_password,
              (totp_secret_enc is not null or totp_pending_secret_enc is not null) as had_totp
         from app_user where id = ? and tenant_id = ? for update`,
    [userId, tenantId],
  )) as { had_password: boolean; had_totp: boolean }[];
  const user = users[0];
  return user ? { hadPassword: user.had_password, hadTotp: user.had_totp } : undefined;
}

/** Removes the password and the TOTP factor (active and pending) of a user of the tenant. */
export async function clearPasswordAndTotp(tx: EntityManager, tenantId: string, userId: string, now: Date): Promise<void> {
  await tx.execute(
    `update app_user set password_hash = null, totp_secret_enc = null, totp_enrolled_at = null,
              totp_pending_secret_enc = null, totp_last_used_step = null, updated_at = ?
        where id = ? and tenant_id = ?`,
    [now, userId, tenantId],
  );
}

/**
 * Marks a live user's address verified (keeping an earlier date) and activates a `Pending` user.
 * @returns the stored `email_verified_at` (equal to `now` when it was set now), or undefined when
 *   there is no live user.
 */
export async function markEmailVerified(em: EntityManager, tenantId: string, userId: string, now: Date): Promise<Date | undefined> {
  const rows = (await em.execute(
    `update app_user set email_verified_at = coalesce(email_verified_at, ?),
              status = case when status = 'Pending' then 'Active' else status end, updated_at = ?
        where id = ? and tenant_id = ? and deleted_at is null
        returning email_verified_at`,
    [now, now, userId, tenantId],
  )) as { email_verified_at: Date }[];
  return rows[0]?.email_verified_at;
}

/** Sets `email_verified_at` to `now` (the provider proved the address) and activates a `Pending` user. */
export async function setEmailVerifiedByProvider(tx: EntityManager, tenantId: string, userId: string, now: Date): Promise<void> {
  await tx.execute(
    `update app_user set email_verified_at = ?, status = case when status = 'Pending' then 'Active' else status end, updated_at = ?
       where id = ? and tenant_id = ?`,
    [now, now, userId, tenantId],
  );
}

/** Keeps `pendingSecretEnc` (keyring ciphertext) as the user's pending TOTP secret. */
export async function setPendingTotpSecret(em: EntityManager, tenantId: string, userId: string, pendingSecretEnc: string): Promise<void> {
  await em.nativeUpdate(UserSchema, { id: userId, tenantId }, { totpPendingSecretEnc: pendingSecretEnc, updatedAt: new Date() });
}

/**
 * Makes the pending TOTP secret the active one, conditional on it still being `pendingSecretEnc`
 * and no factor being active (so two concurrent verifications cannot both activate).
 * @param step the RFC 6238 time step the confirming code matched.
 * @returns false when the condition did not hold.
 */
export async function activatePendingTotp(tx: EntityManager, tenantId: string, userId: string, pendingSecretEnc: string, step: number, now: Date): Promise<boolean> {
  const activated = await tx.execute(
    `update app_user set totp_secret_enc = totp_pending_secret_enc, totp_pending_secret_enc = null,
           totp_enrolled_at = ?, totp_last_used_step = ?, updated_at = ?
         where id = ? and tenant_id = ? and totp_pending_secret_enc = ? and totp_secret_enc is null returning id`,
    [now, step, now, userId, tenantId, pendingSecretEnc],
  );
  return activated.length > 0;
}

/**
 * Records `step` as the last accepted TOTP step when it is later than the stored one.
 * @returns false when it is not (the code was used already).
 */
export async function acceptTotpStep(em: EntityManager, tenantId: string, userId: string, step: number): Promise<boolean> {
  const accepted = await em.execute(
    `update app_user set totp_last_used_step = ?
       where id = ? and tenant_id = ? and (totp_last_used_step is null or totp_last_used_step < ?) returning id`,
    [step, userId, tenantId, step],
  );
  return accepted.length > 0;
}

/** Removes the TOTP factor (active and pending) of a user of the tenant. */
export async function clearTotp(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.nativeUpdate(
    UserSchema,
    { id: userId, tenantId },
    { totpSecretEnc: null, totpEnrolledAt: null, totpPendingSecretEnc: null, totpLastUsedStep: null, updatedAt: new Date() },
  );
}

/** Locks (`FOR UPDATE`) the user row when it has an active TOTP factor. @returns false when it has none. */
export async function lockUserWithActiveTotp(tx: EntityManager, tenantId: string, userId: string): Promise<boolean> {
  const rows = await tx.execute(
    'select id from app_user where id = ? and tenant_id = ? and totp_secret_enc is not null and totp_enrolled_at is not null for update',
    [userId, tenantId],
  );
  return rows.length > 0;
}

/** The keyring ciphertexts a user holds, as key rotation rewraps them. */
export type UserSecrets = Pick<User, 'id' | 'totpSecretEnc' | 'totpPendingSecretEnc'>;

/** One page (by id, after `afterId`) of the tenant's users holding a TOTP secret, active or pending. */
export async function findUsersWithTotpSecrets(em: EntityManager, tenantId: string, afterId: string, limit: number): Promise<UserSecrets[]> {
  const rows = (await em.execute(
    `select id, totp_secret_enc, totp_pending_secret_enc from app_user
         where tenant_id = ? and id > ? and (totp_secret_enc is not null or totp_pending_secret_enc is not null)
         order by id limit ?`,
    [tenantId, afterId, limit],
  )) as { id: string; totp_secret_enc: string | null; totp_pending_secret_enc: string | null }[];
  return rows.map((row) => ({ id: row.id, totpSecretEnc: row.totp_secret_enc, totpPendingSecretEnc: row.totp_pending_secret_enc }));
}

/**
 * Replaces a TOTP ciphertext (`active` or `pending`) with its rewrapped value, conditional on it
 * still being `previous`. @returns false when it changed meanwhile.
 */
export async function replaceTotpCiphertext(
  em: EntityManager,
  tenantId: string,
  userId: string,
  which: 'active' | 'pending',
  fresh: string,
  previous: string,
): Promise<boolean> {
  const column = which === 'active' ? 'totp_secret_enc' : 'totp_pending_secret_enc';
  const updated = await em.execute(`update app_user set ${column} = ? where id = ? and tenant_id = ? and ${column} = ? returning id`, [
    fresh, userId, tenantId, previous,
  ]);
  return updated.length > 0;
}

/** A soft-deleted user whose retention has passed, as the erasure sweep takes it. */
export type ExpiredUser = Pick<User, 'id' | 'tenantId' | 'email'> & { deletedAt: Date };

/**
 * Locks and returns up to `limit` users of any tenant soft-deleted before `cutoff`, oldest first,
 * skipping rows another sweep holds. Also key-share-locks each user's tenant row: a concurrent sweep
 * erasing that tenant (FOR UPDATE) then skips it instead of the two waiting on each other's locks.
 * Call inside the caller's transaction.
 */
export async function lockExpiredDeletedUsers(tx: EntityManager, cutoff: Date, limit: number): Promise<ExpiredUser[]> {
  const rows = (await tx.execute(
    `select u.id, u.tenant_id, u.email, u.deleted_at from app_user u join tenant t on t.id = u.tenant_id
        where u.deleted_at is not null and u.deleted_at < ?
        order by u.deleted_at, u.id limit ?
        for update of u skip locked for key share of t skip locked`,
    [cutoff, limit],
  )) as { id: string; tenant_id: string; email: string; deleted_at: Date }[];
  return rows.map((row) => ({ id: row.id, tenantId: row.tenant_id, email: row.email, deletedAt: row.deleted_at }));
}

/** Deletes the user row for good (the erasure sweep; rows referencing it cascade). */
export async function hardDeleteUser(tx: EntityManager, tenantId: string, userId: string): Promise<void> {
  await tx.execute('delete from app_user where id = ? and tenant_id = ?', [userId, tenantId]);
}

/** Filters of GET users (the directory): an email substring (case-insensitive), a role, a status. */
export interface UserFilter {
  search?: string;
  role?: UserRole;
  status?: UserStatus;
}

/** `LIKE` pattern of a literal substring: `%`, `_` and the escape character itself escaped. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The SQL condition and parameters of a filter (addresses are stored lower case). */
function filterSql(filter: UserFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (filter.search) {
    parts.push(`and email like ? escape '\\'`);
    params.push(containsPattern(filter.search));
  }
  if (filter.role) {
    parts.push('and role = ?');
    params.push(filter.role);
  }
  if (filter.status) {
    parts.push('and status = ?');
    params.push(filter.status);
  }
  return { sql: parts.join(' '), params };
}

const CURSOR_COLUMN = 'page_cursor_created_at';

/** The tenant's live users matching `filter`, oldest first (ties by id): GET users without paging. */
export async function findLiveUsers(em: EntityManager, tenantId: string, filter: UserFilter): Promise<User[]> {
  const where = filterSql(filter);
  const rows = await em.execute<Record<string, unknown>[]>(
    `select * from app_user where tenant_id = ? and deleted_at is null ${where.sql} order by created_at, id`,
    [tenantId, ...where.params],
  );
  return rows.map((row) => rowToEntity(em, UserSchema, row));
}

/**
 * Up to `limit` live users matching `filter` after the keyset `after` (`created_at` as UTC text at
 * microsecond precision, and the id), in list order, each with its `created_at` text for the next
 * cursor. Served by the `(tenant_id, created_at)` index.
 */
export async function findLiveUsersAfter(
  em: EntityManager,
  tenantId: string,
  filter: UserFilter,
  after: [string, string] | undefined,
  limit: number,
): Promise<{ user: User; createdAtText: string }[]> {
  const keyset = after ? `and (created_at, id) > (?::timestamp at time zone 'UTC', ?::uuid)` : '';
  const where = filterSql(filter);
  const rows = await em.execute<Record<string, unknown>[]>(
    `select *, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as ${CURSOR_COLUMN}
       from app_user
      where tenant_id = ? and deleted_at is null ${keyset} ${where.sql}
      order by created_at, id
      limit ?`,
    [tenantId, ...(after ? [after[0], after[1]] : []), ...where.params, limit],
  );
  return rows.map(({ [CURSOR_COLUMN]: cursor, ...row }) => ({ user: rowToEntity(em, UserSchema, row), createdAtText: String(cursor) }));
}

/** Live users of the tenant whose last sign-in is at or after `weekAgo`, and at or after `monthAgo` (the activity page). */
export async function countActiveUsers(em: EntityManager, tenantId: string, weekAgo: Date, monthAgo: Date): Promise<{ last7Days: number; last30Days: number }> {
  const [row] = (await em.execute(
    `select count(*) filter (where last_login_at >= ?)::int as last7, count(*)::int as last30
       from app_user
      where tenant_id = ? and deleted_at is null and last_login_at >= ?`,
    [weekAgo, tenantId, monthAgo],
  )) as { last7: number; last30: number }[];
  return { last7Days: row?.last7 ?? 0, last30Days: row?.last30 ?? 0 };
}

/**
 * Live users of the tenant who are not Pending, and how many of them have TOTP, a passkey, or
 * either (the activity page; reads `passkey` on the way).
 */
export async function countFactorAdoption(em: EntityManager, tenantId: string): Promise<{ users: number; totp: number; passkey: number; anyFactor: number }> {
  const [row] = (await em.execute(
    `select count(*)::int as users,
            count(*) filter (where u.totp_enrolled_at is not null)::int as totp,
            count(*) filter (where p.user_id is not null)::int as passkey,
            count(*) filter (where u.totp_enrolled_at is not null or p.user_id is not null)::int as any_factor
       from app_user u
       left join (select distinct user_id from passkey where tenant_id = ?) p on p.user_id = u.id
      where u.tenant_id = ? and u.deleted_at is null and u.status <> 'Pending'`,
    [tenantId, tenantId],
  )) as { users: number; totp: number; passkey: number; any_factor: number }[];
  return { users: row?.users ?? 0, totp: row?.totp ?? 0, passkey: row?.passkey ?? 0, anyFactor: row?.any_factor ?? 0 };
}

/** The `app_user` columns, in the order {@link insertUsersUnlessTaken} writes them. */
const USER_INSERT_COLUMNS = [
  ['id', 'id'], ['tenant_id', 'tenantId'], ['email', 'email'], ['password_hash', 'passwordHash'], ['status', 'status'], ['role', 'role'],
  ['created_at', 'createdAt'], ['updated_at', 'updatedAt'], ['last_login_at', 'lastLoginAt'], ['email_verified_at', 'emailVerifiedAt'],
  ['deleted_at', 'deletedAt'], ['totp_secret_enc', 'totpSecretEnc'], ['totp_enrolled_at', 'totpEnrolledAt'],
  ['totp_pending_secret_enc', 'totpPendingSecretEnc'], ['totp_last_used_step', 'totpLastUsedStep'], ['locale', 'locale'], ['imported_at', 'importedAt'],
  ['custom_data', 'customData'], ['name', 'name'], ['picture', 'picture'],
] as const satisfies readonly (readonly [string, keyof User])[];

/** The PostgreSQL type of each column {@link insertUsersUnlessTaken} writes (its array parameter's element type). */
const USER_COLUMN_TYPES: Record<(typeof USER_INSERT_COLUMNS)[number][0], string> = {
  id: 'uuid', tenant_id: 'uuid', email: 'text', password_hash: 'text', status: 'text', role: 'text',
  created_at: 'timestamptz', updated_at: 'timestamptz', last_login_at: 'timestamptz', email_verified_at: 'timestamptz',
  deleted_at: 'timestamptz', totp_secret_enc: 'text', totp_enrolled_at: 'timestamptz', totp_pending_secret_enc: 'text',
  totp_last_used_step: 'bigint', locale: 'text', imported_at: 'timestamptz', custom_data: 'jsonb', name: 'text', picture: 'text',
};

/**
 * Which of `emails` (lower-case) belong to a live user of the tenant (an import skips them). The list
 * is one array parameter, each address looked up in the live-address unique index on its own (a
 * lateral subquery): the plan does not depend on how many users the statistics say the tenant has.
 * A plain `email = any(...)` is planned as a scan of all the tenant's users when the statistics are
 * older than the tenant's growth (an import of a million users into a new workspace outruns them).
 */
export async function findLiveEmails(em: EntityManager, tenantId: string, emails: readonly string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const rows = await executeWithArrays<{ email: string }>(
    em,
    `select wanted.email from unnest(?::text[]) as wanted(email)
       cross join lateral (select 1 from app_user u where u.tenant_id = ? and u.email = wanted.email and u.deleted_at is null limit 1) as live`,
    [[...emails], tenantId],
  );
  return new Set(rows.map((r) => r.email));
}

/**
 * Inserts new user rows (an import, docs/import.md) in one statement, skipping every row whose
 * address already belongs to a live user of its tenant (the live-address unique index; `on conflict
 * do nothing`, so an existing user is never overwritten, and a concurrent insert of the same address
 * is skipped too). Each column is sent as one array parameter and the rows are `unnest`ed from
 * them, so a thousand rows cost 20 parameters, not 20,000 literals in the SQL text
 * (docs/performance.md "Import jobs").
 * @returns the ids of the rows inserted.
 */
export async function insertUsersUnlessTaken(tx: EntityManager, users: User[]): Promise<Set<string>> {
  if (users.length === 0) return new Set();
  const rows = await executeWithArrays<{ id: string }>(
    tx,
    `insert into app_user (${USER_INSERT_COLUMNS.map(([column]) => column).join(', ')})
          select * from unnest(${USER_INSERT_COLUMNS.map(([column]) => `?::${USER_COLUMN_TYPES[column]}[]`).join(', ')})
          on conflict do nothing returning id`,
    // the JSON column is bound as its text (the driver would send a JS object as a record otherwise)
    USER_INSERT_COLUMNS.map(([, property]) => users.map((user) => (property === 'customData' ? JSON.stringify(user.customData) : user[property]))),
  );
  return new Set(rows.map((r) => r.id));
}

/** One user of GET users/export: the row without its secrets. */
export type ExportedUserRow = Pick<
  User,
  'id' | 'email' | 'status' | 'role' | 'createdAt' | 'updatedAt' | 'lastLoginAt' | 'emailVerifiedAt' | 'totpEnrolledAt' | 'locale' | 'importedAt' | 'name' | 'picture'
> & { customData: Record<string, unknown> };

/** Where the next export batch starts: the last row's `created_at` (as PostgreSQL text, to the microsecond) and id. */
export interface UserExportKeyset {
  createdAt: string;
  id: string;
}

/**
 * One batch of the tenant's live users for the export, oldest first by (`created_at`, `id`) after
 * the keyset `after` (exclusive; null for the first batch), on the tenant/created index. Selects no
 * password hash and no TOTP secret.
 */
export async function findUserExportBatch(
  em: EntityManager,
  tenantId: string,
  after: UserExportKeyset | null,
  limit: number,
): Promise<{ rows: ExportedUserRow[]; next: UserExportKeyset | null }> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select id, email, status, role, created_at, created_at::text as created_key, updated_at, last_login_at, email_verified_at,
            totp_enrolled_at, locale, imported_at, custom_data, name, picture
       from app_user
      where tenant_id = ? and deleted_at is null ${after ? 'and (created_at, id) > (?::timestamptz, ?)' : ''}
      order by created_at, id
      limit ?`,
    after ? [tenantId, after.createdAt, after.id, limit] : [tenantId, limit],
  );
  const date = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string | Date));
  const last = rows[rows.length - 1];
  return {
    rows: rows.map((r) => ({
      id: r.id as string,
      email: r.email as string,
      status: r.status as UserStatus,
      role: r.role as UserRole,
      createdAt: date(r.created_at)!,
      updatedAt: date(r.updated_at)!,
      lastLoginAt: date(r.last_login_at),
      emailVerifiedAt: date(r.email_verified_at),
      totpEnrolledAt: date(r.totp_enrolled_at),
      locale: (r.locale ?? null) as Locale | null,
      importedAt: date(r.imported_at),
      customData: (typeof r.custom_data === 'string' ? JSON.parse(r.custom_data) : (r.custom_data ?? {})) as Record<string, unknown>,
      name: (r.name ?? null) as string | null,
      picture: (r.picture ?? null) as string | null,
    })),
    next: last ? { createdAt: last.created_key as string, id: last.id as string } : null,
  };
}
