import type { EntityManager } from '@mikro-orm/postgresql';
import { toAccessRoleRow, type AccessRoleRow } from './access-role.js';

/**
 * The queries of the `application_access_role` table (docs/architecture.md "Rules", data access):
 * which of the tenant's roles each `m2m` application holds. The read joins `access_role`. Every
 * statement is scoped by tenant id.
 */

/** The roles the tenant's application holds, by name. */
export async function findRolesOfApplication(em: EntityManager, tenantId: string, applicationId: string): Promise<AccessRoleRow[]> {
  const rows = (await em.execute(
    `select r.id, r.tenant_id, r.name, r.description, r.created_at from application_access_role ar
       join access_role r on r.id = ar.role_id and r.tenant_id = ar.tenant_id
      where ar.tenant_id = ? and ar.application_id = ? order by r.name`,
    [tenantId, applicationId],
  )) as Parameters<typeof toAccessRoleRow>[0][];
  return rows.map(toAccessRoleRow);
}

/** Replaces the roles of the tenant's application with these role ids (of the same tenant). */
export async function replaceApplicationRoles(em: EntityManager, tenantId: string, applicationId: string, roleIds: string[], now: Date): Promise<void> {
  await em.execute('delete from application_access_role where tenant_id = ? and application_id = ?', [tenantId, applicationId]);
  if (roleIds.length === 0) return;
  const placeholders = roleIds.map(() => '(?, ?, ?, ?)').join(', ');
  await em.execute(
    `insert into application_access_role (tenant_id, application_id, role_id, created_at) values ${placeholders}`,
    roleIds.flatMap((id) => [tenantId, applicationId, id, now]),
  );
}
