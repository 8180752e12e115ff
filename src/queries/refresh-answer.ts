import type { EntityManager } from '@mikro-orm/postgresql';
import type { RefreshAnswer } from '../entities/refresh-answer.js';

/**
 * The queries of the `refresh_answer` table (docs/architecture.md "Rules", data access): the
 * encrypted answer of a refresh with an `Idempotency-Key`, kept for a short while. Each function takes
 * the caller's entity manager (pass the transaction when it must run in one; the caller owns it).
 */

/** Inserts a kept answer (in the rotation's transaction). */
export async function insertRefreshAnswer(em: EntityManager, row: RefreshAnswer): Promise<void> {
  await em.execute(
    `insert into refresh_answer (key_hash, tenant_id, session_id, successor_id, answer, created_at, expires_at)
         values (?, ?, ?, ?, ?, ?, ?)`,
    [row.keyHash, row.tenantId, row.sessionId, row.successorId, row.answer, row.createdAt, row.expiresAt],
    'run',
  );
}

/**
 * The ciphertext kept for `keyHash` in the tenant while it has not expired (at `now`), its session is
 * live and the refresh token it issued is unused (joins `session` and `refresh_token`); undefined otherwise.
 */
export async function findUsableRefreshAnswer(em: EntityManager, tenantId: string, keyHash: string, now: Date): Promise<string | undefined> {
  const rows = (await em.execute(
    `select a.answer from refresh_answer a
         join session s on s.id = a.session_id and s.revoked_at is null
         join refresh_token rt on rt.id = a.successor_id and rt.rotated_at is null
        where a.key_hash = ? and a.tenant_id = ? and a.expires_at > ?`,
    [keyHash, tenantId, now],
  )) as { answer: string }[];
  return rows[0]?.answer;
}

/** Deletes the answers of every tenant that expired by `now`. @returns how many rows were deleted. */
export async function deleteExpiredRefreshAnswers(em: EntityManager, now: Date): Promise<number> {
  const result = (await em.execute('delete from refresh_answer where expires_at <= ?', [now], 'run')) as { affectedRows?: number };
  return result.affectedRows ?? 0;
}
