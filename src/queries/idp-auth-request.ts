import type { EntityManager } from '@mikro-orm/postgresql';
import { IdpAuthRequestSchema, type IdpAuthRequest } from '../entities/idp.js';

/**
 * The queries of the `idp_auth_request` table (docs/architecture.md "Rules", data access): the
 * single-use sign-in requests to the upstream provider. Each function takes the caller's entity
 * manager (pass the transaction when it must run in one; the caller owns it); every statement is
 * scoped by tenant id.
 */

/** Inserts a started request. */
export async function insertAuthRequest(em: EntityManager, request: IdpAuthRequest): Promise<void> {
  await em.insert(IdpAuthRequestSchema, request);
}

/** Deletes the tenant's requests that expired before `before`. */
export async function deleteAuthRequestsExpiredBefore(em: EntityManager, tenantId: string, before: Date): Promise<void> {
  await em.execute('delete from idp_auth_request where tenant_id = ? and expires_at < ?', [tenantId, before]);
}

/** Deletes every request of the tenant (the provider changed: none of them can complete). */
export async function deleteAuthRequestsOfTenant(em: EntityManager, tenantId: string): Promise<void> {
  await em.execute('delete from idp_auth_request where tenant_id = ?', [tenantId]);
}

/** Deletes the provider-link flows a user of the tenant started. */
export async function deleteLinkRequestsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute('delete from idp_auth_request where link_user_id = ? and tenant_id = ?', [userId, tenantId]);
}

/** A request spent by its callback. */
export type ConsumedAuthRequest = Pick<IdpAuthRequest, 'id' | 'secretsEnc' | 'issuer'> & { browserBindingHash: string | null; linkUserId: string | null };

/**
 * Marks the tenant's open, unexpired request of `stateHash` spent, atomically (a state is accepted once).
 * @returns it, or undefined when there is no such open request.
 */
export async function consumeAuthRequest(em: EntityManager, tenantId: string, stateHash: string, now: Date): Promise<ConsumedAuthRequest | undefined> {
  const consumed = (await em.execute(
    `update idp_auth_request set consumed_at = ?
        where tenant_id = ? and state_hash = ? and consumed_at is null and expires_at > ?
        returning id, secrets_enc, issuer, browser_binding_hash, link_user_id`,
    [now, tenantId, stateHash, now],
  )) as { id: string; secrets_enc: string; issuer: string; browser_binding_hash: string | null; link_user_id: string | null }[];
  const row = consumed[0];
  return row
    ? { id: row.id, secretsEnc: row.secrets_enc, issuer: row.issuer, browserBindingHash: row.browser_binding_hash, linkUserId: row.link_user_id }
    : undefined;
}

/** Whether the tenant's request of `stateHash` was spent and when it expires; undefined when unknown. */
export async function findAuthRequestState(em: EntityManager, tenantId: string, stateHash: string): Promise<Pick<IdpAuthRequest, 'consumedAt' | 'expiresAt'> | undefined> {
  const rows = (await em.execute('select consumed_at, expires_at from idp_auth_request where tenant_id = ? and state_hash = ?', [
    tenantId,
    stateHash,
  ])) as { consumed_at: Date | null; expires_at: Date }[];
  return rows[0] ? { consumedAt: rows[0].consumed_at, expiresAt: rows[0].expires_at } : undefined;
}
