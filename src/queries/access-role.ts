import type { EntityManager } from '@mikro-orm/postgresql';
import type { AccessRole } from '../entities/access-control.js';

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

/** Who can hold a role: a user of the tenant or one of its (`m2m`) applications. */
export type RoleHolderKind = 'user' | 'application';

/** One holder of a role, in page order, with its assignment's `created_at` as UTC text at microsecond precision (the next cursor). */
export interface RoleHolderRow {
  kind: RoleHolderKind;
  id: string;
  assignedAtText: string;
}

/**
 * Up to `limit` holders of the tenant's role `roleId` after the keyset `after` (assignment
 * `created_at` as UTC text at microsecond precision, kind, id): its live users (`user_access_role`,
 * soft-deleted users left out) and its applications (`application_access_role`), ordered by
 * assignment time (a holder's set of roles is written whole, so that is when it was last set), then
 * kind, then id. It reads both assignment tables from the role, hence lives with `access_role`;
 * served by their `role_id` indexes.
 */
export async function findRoleHoldersAfter(
  em: EntityManager, tenantId: string, roleId: string, after: [string, RoleHolderKind, string] | undefined, limit: number,
): Promise<RoleHolderRow[]> {
  const keyset = after ? `where (h.created_at, h.kind, h.holder_id) > (?::timestamp at time zone 'UTC', ?, ?::uuid)` : '';
  const rows = (await em.execute(
    `select h.kind, h.holder_id, to_char(h.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as assigned_at from (
       select 'user'::text as kind, ur.user_id as holder_id, ur.created_at from user_access_role ur
         join app_user u on u.id = ur.user_id and u.tenant_id = ur.tenant_id
        where ur.tenant_id = ? and ur.role_id = ? and u.deleted_at is null
       union all
       select 'application'::text, ar.application_id, ar.created_at from application_access_role ar
        where ar.tenant_id = ? and ar.role_id = ?
     ) h ${keyset}
     order by h.created_at, h.kind, h.holder_id
     limit ?`,
    [tenantId, roleId, tenantId, roleId, ...(after ?? []), limit],
  )) as { kind: RoleHolderKind; holder_id: string; assigned_at: string }[];
  return rows.map((row) => ({ kind: row.kind, id: row.holder_id, assignedAtText: row.assigned_at }));
}
