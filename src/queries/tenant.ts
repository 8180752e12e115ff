import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../db/rows.js';
import { TenantSchema, type Tenant } from '../entities/tenant.js';

/**
 * The queries of the `tenant` table (docs/architecture.md "Rules", data access). The one query of an
 * authenticated request, which reads the tenant with the session and its user, is in
 * `src/queries/session.ts`. Each function takes the caller's entity manager (pass the
 * transaction when it must run in one; the caller owns it).
 */

/** Inserts a new tenant row and reserves its slug for ever (docs/decisions.md "Slugs are never reused"). */
export async function insertTenant(em: EntityManager, tenant: Tenant): Promise<void> {
  // the slug is reserved for ever (kept when the tenant is erased): a unique violation here is `slug_taken`
  await em.execute('insert into tenant_slug_reservation (slug, reserved_at) values (?, ?)', [tenant.slug, tenant.createdAt]);
  await em.insert(TenantSchema, tenant);
}

/**
 * The live (not soft-deleted) tenant with this slug, or null. Read on every tenant-scoped request
 * and never cached, so a deletion or policy change is seen at once by every instance; plain SQL
 * skips the ORM's per-call query building.
 */
export async function findLiveTenantBySlug(em: EntityManager, slug: string): Promise<Tenant | null> {
  const rows = (await em.execute('select * from tenant where slug = ? and deleted_at is null', [slug])) as Record<string, unknown>[];
  return rows[0] ? rowToEntity(em, TenantSchema, rows[0]) : null;
}

/** The live tenant with this id, or null. */
export async function findLiveTenantById(em: EntityManager, tenantId: string): Promise<Tenant | null> {
  return em.findOne(TenantSchema, { id: tenantId, deletedAt: null }, { disableIdentityMap: true });
}

/** Locks (`FOR UPDATE`) and returns the live tenant with this id, or null. Call inside the caller's transaction. */
export async function lockLiveTenant(tx: EntityManager, tenantId: string): Promise<Tenant | null> {
  return tx.findOne(TenantSchema, { id: tenantId, deletedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE, disableIdentityMap: true });
}

/** Locks (`FOR UPDATE`) the tenant row, so operations counting per tenant run one after the other. */
export async function lockTenantRow(tx: EntityManager, tenantId: string): Promise<void> {
  await tx.execute('select id from tenant where id = ? for update', [tenantId]);
}

/** Writes the given columns of the tenant. */
export async function updateTenant(em: EntityManager, tenantId: string, update: Partial<Tenant>): Promise<void> {
  await em.nativeUpdate(TenantSchema, { id: tenantId }, update);
}

/**
 * Removes the tenant's provider client id and secret when one is set.
 * @returns false when neither was set.
 */
export async function clearIdpCredentials(em: EntityManager, tenantId: string, now: Date): Promise<boolean> {
  const cleared = (await em.execute(
    `update tenant set idp_client_id = null, idp_client_secret_enc = null, updated_at = ?
          where id = ? and (idp_client_id is not null or idp_client_secret_enc is not null)
          returning id`,
    [now, tenantId],
  )) as { id: string }[];
  return cleared.length > 0;
}

/** Soft-deletes a live tenant (`deleted_at` = `now`). */
export async function markTenantDeleted(tx: EntityManager, tenantId: string, now: Date): Promise<void> {
  await tx.execute('update tenant set deleted_at = ?, updated_at = ? where id = ? and deleted_at is null', [now, now, tenantId]);
}

/**
 * Locks and returns the ids of up to `limit` tenants soft-deleted before `cutoff`, oldest first,
 * skipping rows another sweep holds. Call inside the caller's transaction.
 */
export async function lockExpiredDeletedTenantIds(tx: EntityManager, cutoff: Date, limit: number): Promise<string[]> {
  const tenants = (await tx.execute(
    `select id from tenant where deleted_at is not null and deleted_at < ?
        order by deleted_at, id limit ? for update skip locked`,
    [cutoff, limit],
  )) as { id: string }[];
  return tenants.map((tenant) => tenant.id);
}

/** Deletes the tenant row for good (the erasure sweep; every row of the tenant cascades). */
export async function hardDeleteTenant(tx: EntityManager, tenantId: string): Promise<void> {
  await tx.execute('delete from tenant where id = ?', [tenantId]);
}

/** Every tenant (or only `tenantId`) with its provider client secret ciphertext, by id. */
export async function findTenantIdpSecrets(em: EntityManager, tenantId?: string): Promise<Pick<Tenant, 'id' | 'idpClientSecretEnc'>[]> {
  const rows = (await em.execute(
    `select id, idp_client_secret_enc from tenant${tenantId ? ' where id = ?' : ''} order by id`,
    tenantId ? [tenantId] : [],
  )) as { id: string; idp_client_secret_enc: string | null }[];
  return rows.map((row) => ({ id: row.id, idpClientSecretEnc: row.idp_client_secret_enc }));
}

/** Replaces the provider client secret ciphertext, conditional on it still being `previous`. @returns false when it changed meanwhile. */
export async function replaceIdpSecretCiphertext(em: EntityManager, tenantId: string, fresh: string, previous: string): Promise<boolean> {
  const updated = await em.execute('update tenant set idp_client_secret_enc = ? where id = ? and idp_client_secret_enc = ? returning id', [
    fresh, tenantId, previous,
  ]);
  return updated.length > 0;
}
