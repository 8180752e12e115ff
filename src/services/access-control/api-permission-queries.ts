import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiPermission } from '../../entities/access-control.js';

/**
 * The queries of the `api_permission` table (docs/architecture.md "Rules", data access): the
 * permissions of the tenant's API resources. The two statements that answer "which permissions of a
 * resource does this user / application hold" join `access_role_permission` and the assignment
 * tables; they live here because they read permissions. Every statement is scoped by tenant id.
 */

export type ApiPermissionRow = ApiPermission;

interface Columns {
  id: string;
  tenant_id: string;
  resource_id: string;
  name: string;
  description: string;
  created_at: Date;
}

function toRow(row: Columns): ApiPermissionRow {
  return { id: row.id, tenantId: row.tenant_id, resourceId: row.resource_id, name: row.name, description: row.description, createdAt: new Date(row.created_at) };
}

/** The permissions of these resources of the tenant, by resource then name. */
export async function findPermissionsOfResources(em: EntityManager, tenantId: string, resourceIds: string[]): Promise<ApiPermissionRow[]> {
  if (resourceIds.length === 0) return [];
  const rows = (await em.execute(
    'select * from api_permission where tenant_id = ? and resource_id in (?) order by resource_id, name',
    [tenantId, resourceIds],
  )) as Columns[];
  return rows.map(toRow);
}

/** Inserts permissions (all of one tenant). */
export async function insertPermissions(em: EntityManager, rows: ApiPermissionRow[]): Promise<void> {
  if (rows.length === 0) return;
  const placeholders = rows.map(() => '(?, ?, ?, ?, ?, ?)').join(', ');
  await em.execute(
    `insert into api_permission (id, tenant_id, resource_id, name, description, created_at) values ${placeholders}`,
    rows.flatMap((r) => [r.id, r.tenantId, r.resourceId, r.name, r.description, r.createdAt]),
  );
}

/** Sets the description of the tenant's permission. */
export async function setPermissionDescription(em: EntityManager, tenantId: string, id: string, description: string): Promise<void> {
  await em.execute('update api_permission set description = ? where id = ? and tenant_id = ?', [description, id, tenantId]);
}

/** Deletes permissions of the tenant; roles lose them (cascade). */
export async function deletePermissions(em: EntityManager, tenantId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await em.execute('delete from api_permission where tenant_id = ? and id in (?)', [tenantId, ids]);
}

/** The names of the resource's permissions that a role of the user grants. */
export async function findPermissionNamesGrantedToUser(em: EntityManager, tenantId: string, resourceId: string, userId: string): Promise<string[]> {
  const rows = (await em.execute(
    `select distinct p.name from api_permission p
       join access_role_permission rp on rp.permission_id = p.id and rp.tenant_id = p.tenant_id
       join user_access_role ur on ur.role_id = rp.role_id and ur.tenant_id = p.tenant_id
      where p.tenant_id = ? and p.resource_id = ? and ur.user_id = ?`,
    [tenantId, resourceId, userId],
  )) as { name: string }[];
  return rows.map((r) => r.name);
}

/** The names of the resource's permissions that a role of the application grants. */
export async function findPermissionNamesGrantedToApplication(em: EntityManager, tenantId: string, resourceId: string, applicationId: string): Promise<string[]> {
  const rows = (await em.execute(
    `select distinct p.name from api_permission p
       join access_role_permission rp on rp.permission_id = p.id and rp.tenant_id = p.tenant_id
       join application_access_role ar on ar.role_id = rp.role_id and ar.tenant_id = p.tenant_id
      where p.tenant_id = ? and p.resource_id = ? and ar.application_id = ?`,
    [tenantId, resourceId, applicationId],
  )) as { name: string }[];
  return rows.map((r) => r.name);
}
