import type { EntityManager } from '@mikro-orm/postgresql';
import type { AccessRole } from '../../entities/access-control.js';

/**
 * The queries of the `access_role` table (docs/architecture.md "Rules", data access): the tenant's
 * own roles. Every statement is scoped by tenant id; the caller owns the transaction.
 */

/** A role as read (`updated_at` is only written). */
export type AccessRoleRow = Omit<AccessRole, 'updatedAt'>;

interface Columns {
  id: string;
  tenant_id: string;
  name: string;
  description: string;
  created_at: Date;
}

const COLUMNS = 'id, tenant_id, name, description, created_at';

/** Maps a row of `access_role` (also used by the assignment modules' joins). */
export function toAccessRoleRow(row: Columns): AccessRoleRow {
  return { id: row.id, tenantId: row.tenant_id, name: row.name, description: row.description, createdAt: new Date(row.created_at) };
}

/** Inserts a role. @throws the driver's unique violation when the name is taken. */
export async function insertRole(em: EntityManager, row: AccessRoleRow): Promise<void> {
  await em.execute('insert into access_role (id, tenant_id, name, description, created_at, updated_at) values (?, ?, ?, ?, ?, ?)', [
    row.id, row.tenantId, row.name, row.description, row.createdAt, row.createdAt,
  ]);
}

/** The tenant's roles, oldest first. */
export async function findRolesOfTenant(em: EntityManager, tenantId: string): Promise<AccessRoleRow[]> {
  const rows = (await em.execute(`select ${COLUMNS} from access_role where tenant_id = ? order by created_at, id`, [tenantId])) as Columns[];
  return rows.map(toAccessRoleRow);
}

/** The tenant's role `id` (locked `FOR UPDATE` with `forUpdate`), or undefined. */
export async function findRole(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<AccessRoleRow | undefined> {
  const rows = (await em.execute(`select ${COLUMNS} from access_role where id = ? and tenant_id = ?${forUpdate ? ' for update' : ''}`, [id, tenantId])) as Columns[];
  return rows[0] ? toAccessRoleRow(rows[0]) : undefined;
}

/** The tenant's roles among these ids (others, and other tenants' ids, are left out), by name. */
export async function findRolesByIds(em: EntityManager, tenantId: string, ids: string[]): Promise<AccessRoleRow[]> {
  if (ids.length === 0) return [];
  const rows = (await em.execute(`select ${COLUMNS} from access_role where tenant_id = ? and id in (?) order by name`, [tenantId, ids])) as Columns[];
  return rows.map(toAccessRoleRow);
}

/** Sets name and description of the tenant's role. @throws the driver's unique violation when the name is taken. */
export async function updateRole(em: EntityManager, tenantId: string, id: string, changes: Pick<AccessRoleRow, 'name' | 'description'>, now: Date): Promise<void> {
  await em.execute('update access_role set name = ?, description = ?, updated_at = ? where id = ? and tenant_id = ?', [
    changes.name, changes.description, now, id, tenantId,
  ]);
}

/** Deletes the tenant's role; its permissions and every assignment of it go with it (cascade). */
export async function deleteRole(em: EntityManager, tenantId: string, id: string): Promise<void> {
  await em.execute('delete from access_role where id = ? and tenant_id = ?', [id, tenantId]);
}
