import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountTokenSchema, type AccountToken, type AccountTokenPurpose } from '../entities/account-token.js';

/**
 * The queries of the `account_token` table (docs/architecture.md "Rules", data access): single-use
 * tokens mailed to users. Each function takes the caller's entity manager (pass the transaction when
 * it must run in one; the caller owns it); every statement is scoped by tenant id.
 */

/** Inserts a token. */
export async function insertAccountToken(em: EntityManager, token: AccountToken): Promise<void> {
  await em.insert(AccountTokenSchema, token);
}

/** Deletes the unused tokens of one purpose of a user of the tenant. @returns how many were deleted. */
export async function deleteOpenAccountTokens(em: EntityManager, tenantId: string, userId: string, purpose: AccountTokenPurpose): Promise<number> {
  const rows = await em.execute(
    'delete from account_token where tenant_id = ? and user_id = ? and purpose = ? and consumed_at is null returning id',
    [tenantId, userId, purpose],
  );
  return rows.length;
}

/** Deletes every unused token of a user of the tenant, whatever its purpose. */
export async function deleteAllOpenAccountTokens(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute('delete from account_token where user_id = ? and tenant_id = ? and consumed_at is null', [userId, tenantId]);
}

/** The tenant's token of `tokenHash` and purpose (owner, used, expiry), or undefined. */
export async function findAccountToken(
  em: EntityManager,
  tenantId: string,
  tokenHash: string,
  purpose: AccountTokenPurpose,
): Promise<Pick<AccountToken, 'userId' | 'consumedAt' | 'expiresAt'> | undefined> {
  const rows = (await em.execute(
    'select user_id, consumed_at, expires_at from account_token where token_hash = ? and tenant_id = ? and purpose = ?',
    [tokenHash, tenantId, purpose],
  )) as { user_id: string; consumed_at: Date | null; expires_at: Date }[];
  const row = rows[0];
  return row ? { userId: row.user_id, consumedAt: row.consumed_at, expiresAt: row.expires_at } : undefined;
}

/**
 * Consumes the tenant's unused, unexpired token of `tokenHash` and purpose with one conditional
 * UPDATE (of two concurrent uses exactly one succeeds).
 * @returns its user id and, for `email_change`, the address it confirms; undefined when it was not usable.
 */
export async function consumeAccountToken(
  em: EntityManager,
  tenantId: string,
  tokenHash: string,
  purpose: AccountTokenPurpose,
  now: Date,
): Promise<{ userId: string; newEmail: string | null } | undefined> {
  const rows = (await em.execute(
    `update account_token set consumed_at = ?
        where token_hash = ? and tenant_id = ? and purpose = ? and consumed_at is null and expires_at > ?
        returning user_id, new_email`,
    [now, tokenHash, tenantId, purpose, now],
  )) as { user_id: string; new_email: string | null }[];
  return rows[0] ? { userId: rows[0].user_id, newEmail: rows[0].new_email } : undefined;
}
