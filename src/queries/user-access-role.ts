import type { EntityManager } from '@mikro-orm/postgresql';
import { toAccessRoleRow, type AccessRoleRow } from './access-role.js';

/**
 * The queries of the `user_access_role` table (docs/architecture.md "Rules", data access): which of
 * the tenant's roles each user holds. The read joins `access_role` for the roles themselves. Every
 * statement is scoped by tenant id.
 */

/** One of the tenant's roles a user holds, with when it was assigned. */
export type RoleOfUser = AccessRoleRow & {
  /** When the user's set of roles that holds it was last written (`user_access_role.created_at`; the set is replaced whole). */
  assignedAt: Date;
};

/**
 * The roles the tenant's user holds, by name, each with when it was assigned; a soft-deleted user's
 * too (held until the erasure sweep, and exported until then: docs/lifecycle.md "Data export").
 */
export async function findRolesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<RoleOfUser[]> {
  const rows = (await em.execute(
    `select r.id, r.tenant_id, r.name, r.description, r.created_at, ur.created_at as assigned_at from user_access_role ur
       join access_role r on r.id = ur.role_id and r.tenant_id = ur.tenant_id
      where ur.tenant_id = ? and ur.user_id = ? order by r.name`,
    [tenantId, userId],
  )) as (Parameters<typeof toAccessRoleRow>[0] & { assigned_at: Date | string })[];
  return rows.map((row) => ({ ...toAccessRoleRow(row), assignedAt: new Date(row.assigned_at) }));
}

/** Replaces the roles of the tenant's user with these role ids (of the same tenant). */
export async function replaceUserRoles(em: EntityManager, tenantId: string, userId: string, roleIds: string[], now: Date): Promise<void> {
  await em.execute('delete from user_access_role where tenant_id = ? and user_id = ?', [tenantId, userId]);
  if (roleIds.length === 0) return;
  const placeholders = roleIds.map(() => '(?, ?, ?, ?)').join(', ');
  await em.execute(
    `insert into user_access_role (tenant_id, user_id, role_id, created_at) values ${placeholders}`,
    roleIds.flatMap((id) => [tenantId, userId, id, now]),
  );
}
