import type { EntityManager } from '@mikro-orm/postgresql';
import type { EmailOtp } from '../entities/email-otp.js';

/**
 * The queries of the `email_otp` table (docs/architecture.md "Rules", data access): the open email
 * code of a user, one per user. Each function takes the caller's entity manager (pass the transaction
 * when it must run in one; the caller owns it); every statement is scoped by tenant id.
 */

/** Stores a user's open code, replacing an earlier one (attempts back to 0). */
export async function upsertEmailOtp(em: EntityManager, otp: Omit<EmailOtp, 'attempts'>): Promise<void> {
  await em.execute(
    `insert into email_otp (user_id, tenant_id, code_hash, attempts, created_at, expires_at) values (?, ?, ?, 0, ?, ?)
       on conflict (user_id) do update
         set code_hash = excluded.code_hash, attempts = 0, created_at = excluded.created_at, expires_at = excluded.expires_at`,
    [otp.userId, otp.tenantId, otp.codeHash, otp.createdAt, otp.expiresAt],
  );
}

/**
 * Counts one try against the user's open, unexpired code while fewer than `maxAttempts` were made.
 * @returns the code hash and the attempts so far (this one included), or undefined when there is no usable code.
 */
export async function countEmailOtpAttempt(
  em: EntityManager,
  tenantId: string,
  userId: string,
  maxAttempts: number,
  now: Date,
): Promise<Pick<EmailOtp, 'codeHash' | 'attempts'> | undefined> {
  const [row] = (await em.execute(
    `update email_otp set attempts = attempts + 1
       where user_id = ? and tenant_id = ? and attempts < ? and expires_at > ? returning code_hash, attempts`,
    [userId, tenantId, maxAttempts, now],
  )) as { code_hash: string; attempts: number }[];
  return row ? { codeHash: row.code_hash, attempts: row.attempts } : undefined;
}

/** Deletes the user's code when it is still `codeHash`. @returns false when it was not (gone or replaced). */
export async function deleteEmailOtpWithHash(em: EntityManager, tenantId: string, userId: string, codeHash: string): Promise<boolean> {
  const consumed = await em.execute('delete from email_otp where user_id = ? and tenant_id = ? and code_hash = ? returning user_id', [
    userId, tenantId, codeHash,
  ]);
  return consumed.length > 0;
}

/** Deletes the user's open code, if any. */
export async function deleteEmailOtpOfUser(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute('delete from email_otp where user_id = ? and tenant_id = ?', [userId, tenantId]);
}
