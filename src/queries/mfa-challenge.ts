import type { EntityManager } from '@mikro-orm/postgresql';
import type { FirstFactor, MfaChallenge } from '../entities/mfa.js';

/**
 * The queries of the `mfa_challenge` table (docs/architecture.md "Rules", data access): the pending
 * second step of a sign-in. The look-up of the challenged user's email reads `app_user` through the
 * challenge and lives here. Each function takes the caller's entity manager (pass the transaction
 * when it must run in one; the caller owns it).
 */

export type { FirstFactor };

/** Deletes every challenge of a user of the tenant (a new sign-in replaces them; the account is reclaimed). */
export async function deleteChallengesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute('delete from mfa_challenge where tenant_id = ? and user_id = ?', [tenantId, userId]);
}

/** Inserts a new challenge (no attempts, not consumed). */
export async function insertChallenge(em: EntityManager, challenge: Omit<MfaChallenge, 'attempts' | 'consumedAt'>): Promise<void> {
  await em.execute(
    `insert into mfa_challenge (id, tenant_id, user_id, token_hash, first_factor, issuer, attempts, created_at, expires_at, consumed_at)
       values (?, ?, ?, ?, ?, ?, 0, ?, ?, null)`,
    [challenge.id, challenge.tenantId, challenge.userId, challenge.tokenHash, challenge.firstFactor, challenge.issuer, challenge.createdAt, challenge.expiresAt],
  );
}

/** The email of the user of the tenant's open, unexpired challenge of `tokenHash` (joins `app_user`), or null. */
export async function findOpenChallengeEmail(em: EntityManager, tenantId: string, tokenHash: string, now: Date): Promise<string | null> {
  const rows = (await em.execute(
    `select u.email from mfa_challenge c join app_user u on u.id = c.user_id and u.tenant_id = c.tenant_id
        where c.token_hash = ? and c.tenant_id = ? and c.consumed_at is null and c.expires_at > ?`,
    [tokenHash, tenantId, now],
  )) as { email: string }[];
  return rows[0]?.email ?? null;
}

/**
 * Counts one try against the tenant's open, unexpired challenge of `tokenHash` while fewer than
 * `maxAttempts` were made.
 * @returns it (attempts including this one), or undefined when it is not usable.
 */
export async function countChallengeAttempt(
  em: EntityManager,
  tenantId: string,
  tokenHash: string,
  maxAttempts: number,
  now: Date,
): Promise<Pick<MfaChallenge, 'id' | 'userId' | 'firstFactor' | 'issuer' | 'attempts'> | undefined> {
  const rows = (await em.execute(
    `update mfa_challenge set attempts = attempts + 1
        where token_hash = ? and tenant_id = ? and consumed_at is null and expires_at > ? and attempts < ?
        returning id, user_id, first_factor, issuer, attempts`,
    [tokenHash, tenantId, now, maxAttempts],
  )) as { id: string; user_id: string; first_factor: FirstFactor; issuer: string | null; attempts: number }[];
  const row = rows[0];
  return row ? { id: row.id, userId: row.user_id, firstFactor: row.first_factor, issuer: row.issuer, attempts: row.attempts } : undefined;
}

/** Marks the tenant's challenge `id` spent. @returns false when it already was. */
export async function spendChallenge(em: EntityManager, tenantId: string, id: string, now: Date): Promise<boolean> {
  const spent = await em.execute('update mfa_challenge set consumed_at = ? where id = ? and tenant_id = ? and consumed_at is null returning id', [now, id, tenantId]);
  return spent.length > 0;
}

/** The state of the tenant's challenge of `tokenHash`, to explain why it is unusable; undefined when unknown. */
export async function findChallengeState(
  em: EntityManager,
  tenantId: string,
  tokenHash: string,
): Promise<Pick<MfaChallenge, 'consumedAt' | 'expiresAt' | 'attempts'> | undefined> {
  const rows = (await em.execute('select consumed_at, expires_at, attempts from mfa_challenge where token_hash = ? and tenant_id = ?', [
    tokenHash, tenantId,
  ])) as { consumed_at: Date | null; expires_at: Date; attempts: number }[];
  const row = rows[0];
  return row ? { consumedAt: row.consumed_at, expiresAt: row.expires_at, attempts: row.attempts } : undefined;
}
