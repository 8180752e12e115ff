import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The queries of the `access_role_permission` table (docs/architecture.md "Rules", data access):
 * which permissions each role bundles. The read joins `api_permission` and `api_resource` to name
 * them as the API shows them. Every statement is scoped by tenant id.
 */

/** One permission of a role: the resource identifier and the permission name. */
export interface RolePermissionRow {
  roleId: string;
  resource: string;
  permission: string;
}

/** The permissions of these roles of the tenant, by resource identifier then name. */
export async function findPermissionsOfRoles(em: EntityManager, tenantId: string, roleIds: string[]): Promise<RolePermissionRow[]> {
  if (roleIds.length === 0) return [];
  const rows = (await em.execute(
    `select rp.role_id, r.identifier, p.name from access_role_permission rp
       join api_permission p on p.id = rp.permission_id and p.tenant_id = rp.tenant_id
       join api_resource r on r.id = p.resource_id and r.tenant_id = rp.tenant_id
      where rp.tenant_id = ? and rp.role_id in (?) order by r.identifier, p.name`,
    [tenantId, roleIds],
  )) as { role_id: string; identifier: string; name: string }[];
  return rows.map((row) => ({ roleId: row.role_id, resource: row.identifier, permission: row.name }));
}

/** Replaces the permissions of the tenant's role with these permission ids (of the same tenant). */
export async function replaceRolePermissions(em: EntityManager, tenantId: string, roleId: string, permissionIds: string[]): Promise<void> {
  await em.execute('delete from access_role_permission where tenant_id = ? and role_id = ?', [tenantId, roleId]);
  if (permissionIds.length === 0) return;
  const placeholders = permissionIds.map(() => '(?, ?, ?)').join(', ');
  await em.execute(
    `insert into access_role_permission (tenant_id, role_id, permission_id) values ${placeholders}`,
    permissionIds.flatMap((id) => [tenantId, roleId, id]),
  );
}
