import type { EntityManager } from '@mikro-orm/postgresql';
import type { MfaRecoveryCode } from '../entities/mfa.js';

/**
 * The queries of the `mfa_recovery_code` table (docs/architecture.md "Rules", data access): a user's
 * single-use recovery codes, stored as hashes. Each function takes the caller's entity manager (pass
 * the transaction when it must run in one; the caller owns it); every statement is scoped by tenant id.
 */

/** Deletes every code of a user of the tenant. @returns how many were deleted. */
export async function deleteRecoveryCodesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<number> {
  const rows = await em.execute('delete from mfa_recovery_code where tenant_id = ? and user_id = ? returning 1', [tenantId, userId]);
  return (rows as unknown[]).length;
}

/** Inserts unused codes of a user of the tenant, given as hashes, in one statement. */
export async function insertRecoveryCodes(em: EntityManager, tenantId: string, userId: string, codeHashes: Pick<MfaRecoveryCode, 'id' | 'codeHash'>[], now: Date): Promise<void> {
  await em.execute(
    `insert into mfa_recovery_code (id, tenant_id, user_id, code_hash, created_at, used_at) values ${codeHashes.map(() => '(?, ?, ?, ?, ?, null)').join(', ')}`,
    codeHashes.flatMap((code) => [code.id, tenantId, userId, code.codeHash, now]),
  );
}

/** How many unused codes a user of the tenant has. */
export async function countUnusedRecoveryCodes(em: EntityManager, tenantId: string, userId: string): Promise<number> {
  const rows = (await em.execute(
    'select count(*)::int as n from mfa_recovery_code where tenant_id = ? and user_id = ? and used_at is null',
    [tenantId, userId],
  )) as { n: number }[];
  return Number(rows[0]?.n ?? 0);
}

/** Marks the unused code of `codeHash` used. @returns false when there is none. */
export async function useRecoveryCode(em: EntityManager, tenantId: string, userId: string, codeHash: string, now: Date): Promise<boolean> {
  const used = (await em.execute(
    `update mfa_recovery_code set used_at = ?
        where tenant_id = ? and user_id = ? and code_hash = ? and used_at is null returning id`,
    [now, tenantId, userId, codeHash],
  )) as { id: string }[];
  return used.length > 0;
}
