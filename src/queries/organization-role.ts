import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../db/rows.js';
import { OrganizationRoleSchema, type OrganizationRole } from '../entities/organization.js';

/**
 * The queries of the `organization_role` table (docs/architecture.md "Rules", data access): the
 * tenant's template of organization roles (docs/organizations.md "Roles"). Each function takes the
 * caller's entity manager; every statement is scoped by tenant id.
 */

/** Inserts a role (a taken name fails the `(tenant_id, name)` unique index). */
export async function insertOrganizationRole(em: EntityManager, role: OrganizationRole): Promise<void> {
  await em.execute(
    'insert into organization_role (id, tenant_id, name, description, permissions, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)',
    [role.id, role.tenantId, role.name, role.description, JSON.stringify(role.permissions), role.createdAt, role.updatedAt],
  );
}

/** The tenant's organization roles, by name. */
export async function findOrganizationRolesOfTenant(em: EntityManager, tenantId: string): Promise<OrganizationRole[]> {
  const rows = await em.execute<Record<string, unknown>[]>('select * from organization_role where tenant_id = ? order by name, id', [tenantId]);
  return rows.map((row) => rowToEntity(em, OrganizationRoleSchema, row));
}

/** The tenant's organization role `id` (locked `FOR UPDATE` with `forUpdate`), or undefined. */
export async function findOrganizationRole(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<OrganizationRole | undefined> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select * from organization_role where id = ? and tenant_id = ?${forUpdate ? ' for update' : ''}`,
    [id, tenantId],
  );
  return rows[0] ? rowToEntity(em, OrganizationRoleSchema, rows[0]) : undefined;
}

/** The tenant's organization roles named in `names` (those that exist; `FOR KEY SHARE`, so none is deleted before the caller commits). */
export async function findOrganizationRolesByName(em: EntityManager, tenantId: string, names: string[]): Promise<OrganizationRole[]> {
  if (names.length === 0) return [];
  const rows = await em.execute<Record<string, unknown>[]>(
    `select * from organization_role where tenant_id = ? and name in (${names.map(() => '?').join(', ')}) order by name for key share`,
    [tenantId, ...names],
  );
  return rows.map((row) => rowToEntity(em, OrganizationRoleSchema, row));
}

/** Sets a role's name, description and permissions. @returns it as stored. */
export async function updateOrganizationRole(
  em: EntityManager, tenantId: string, id: string, fields: Pick<OrganizationRole, 'name' | 'description' | 'permissions'>, now: Date,
): Promise<OrganizationRole> {
  const rows = await em.execute<Record<string, unknown>[]>(
    'update organization_role set name = ?, description = ?, permissions = ?, updated_at = ? where id = ? and tenant_id = ? returning *',
    [fields.name, fields.description, JSON.stringify(fields.permissions), now, id, tenantId],
  );
  return rowToEntity(em, OrganizationRoleSchema, rows[0]!);
}

/** Deletes a role; the memberships holding it lose it (cascade). */
export async function deleteOrganizationRole(em: EntityManager, tenantId: string, id: string): Promise<void> {
  await em.execute('delete from organization_role where id = ? and tenant_id = ?', [id, tenantId]);
}
