import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiResource } from '../entities/access-control.js';

/**
 * The queries of the `api_resource` table (docs/architecture.md "Rules", data access): the tenant's
 * own APIs. Each function takes the caller's entity manager (the caller owns the transaction); every
 * statement is scoped by tenant id.
 */

/** An API resource as read (`updated_at` is only written). */
export type ApiResourceRow = Omit<ApiResource, 'updatedAt'>;

interface Columns {
  id: string;
  tenant_id: string;
  name: string;
  identifier: string;
  legacy_origin: boolean;
  created_at: Date;
}

function toRow(row: Columns): ApiResourceRow {
  return { id: row.id, tenantId: row.tenant_id, name: row.name, identifier: row.identifier, legacyOrigin: row.legacy_origin, createdAt: new Date(row.created_at) };
}

const COLUMNS = 'id, tenant_id, name, identifier, legacy_origin, created_at';

/** Inserts a resource (`updated_at` = `createdAt`). @throws the driver's unique violation when the identifier is taken. */
export async function insertApiResource(em: EntityManager, row: ApiResourceRow): Promise<void> {
  await em.execute(
    'insert into api_resource (id, tenant_id, name, identifier, legacy_origin, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)',
    [row.id, row.tenantId, row.name, row.identifier, row.legacyOrigin, row.createdAt, row.createdAt],
  );
}

/** The tenant's resources, oldest first. */
export async function findApiResourcesOfTenant(em: EntityManager, tenantId: string): Promise<ApiResourceRow[]> {
  const rows = (await em.execute(`select ${COLUMNS} from api_resource where tenant_id = ? order by created_at, id`, [tenantId])) as Columns[];
  return rows.map(toRow);
}

/** The tenant's resource `id` (locked `FOR UPDATE` with `forUpdate`), or undefined. */
export async function findApiResource(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<ApiResourceRow | undefined> {
  const rows = (await em.execute(`select ${COLUMNS} from api_resource where id = ? and tenant_id = ?${forUpdate ? ' for update' : ''}`, [id, tenantId])) as Columns[];
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** The tenant's resources with these identifiers (exact match). */
export async function findApiResourcesByIdentifiers(em: EntityManager, tenantId: string, identifiers: string[]): Promise<ApiResourceRow[]> {
  if (identifiers.length === 0) return [];
  const rows = (await em.execute(`select ${COLUMNS} from api_resource where tenant_id = ? and identifier in (?)`, [tenantId, identifiers])) as Columns[];
  return rows.map(toRow);
}

/**
 * The resource an RFC 8707 `resource` value names: the one with this exact identifier, else a
 * migrated resource whose identifier is the value's `origin`; undefined when none.
 */
export async function findApiResourceForIndicator(em: EntityManager, tenantId: string, resource: string, origin: string | null): Promise<ApiResourceRow | undefined> {
  const rows = (await em.execute(
    `select ${COLUMNS} from api_resource where tenant_id = ? and (identifier = ? or (legacy_origin and identifier = ?))
      order by (identifier = ?) desc limit 1`,
    [tenantId, resource, origin ?? resource, resource],
  )) as Columns[];
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** Renames the tenant's resource. */
export async function renameApiResource(em: EntityManager, tenantId: string, id: string, name: string, now: Date): Promise<void> {
  await em.execute('update api_resource set name = ?, updated_at = ? where id = ? and tenant_id = ?', [name, now, id, tenantId]);
}

/** Deletes the tenant's resource; its permissions, and their place in roles, go with it (cascade). */
export async function deleteApiResource(em: EntityManager, tenantId: string, id: string): Promise<void> {
  await em.execute('delete from api_resource where id = ? and tenant_id = ?', [id, tenantId]);
}
