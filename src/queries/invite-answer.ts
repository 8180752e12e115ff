import type { EntityManager } from '@mikro-orm/postgresql';
import type { InviteAnswer } from '../entities/invite-answer.js';

/**
 * The queries of the `invite_answer` table (docs/architecture.md "Rules", data access): the
 * encrypted answer of an invite created or resent with an `Idempotency-Key`, kept for a while. Each function
 * takes the caller's entity manager (pass the transaction when it must run in one; the caller owns it).
 */

/**
 * Keeps an answer (in the invite's transaction). A row of the key that expired but was not swept yet
 * is replaced; a live one (or one a concurrent transaction is committing, which this waits for) is not.
 * @returns false when a live answer holds the key.
 */
export async function insertInviteAnswer(em: EntityManager, row: InviteAnswer): Promise<boolean> {
  const inserted = (await em.execute(
    `insert into invite_answer (key_hash, tenant_id, invite_id, request_hash, answer, created_at, expires_at)
         values (?, ?, ?, ?, ?, ?, ?)
         on conflict (key_hash) do update
            set tenant_id = excluded.tenant_id, invite_id = excluded.invite_id, request_hash = excluded.request_hash,
                answer = excluded.answer, created_at = excluded.created_at, expires_at = excluded.expires_at
          where invite_answer.expires_at <= excluded.created_at
         returning key_hash`,
    [row.keyHash, row.tenantId, row.inviteId, row.requestHash, row.answer, row.createdAt, row.expiresAt],
  )) as unknown[];
  return inserted.length > 0;
}

/** The request hash and ciphertext kept for `keyHash` in the tenant while it has not expired (at `now`); undefined otherwise. */
export async function findInviteAnswer(
  em: EntityManager, tenantId: string, keyHash: string, now: Date,
): Promise<Pick<InviteAnswer, 'requestHash' | 'answer'> | undefined> {
  const rows = (await em.execute(
    'select request_hash, answer from invite_answer where key_hash = ? and tenant_id = ? and expires_at > ?',
    [keyHash, tenantId, now],
  )) as { request_hash: string; answer: string }[];
  const row = rows[0];
  return row ? { requestHash: row.request_hash, answer: row.answer } : undefined;
}

/** Deletes the answers of every tenant that expired by `now`. @returns how many rows were deleted. */
export async function deleteExpiredInviteAnswers(em: EntityManager, now: Date): Promise<number> {
  const result = (await em.execute('delete from invite_answer where expires_at <= ?', [now], 'run')) as { affectedRows?: number };
  return result.affectedRows ?? 0;
}
