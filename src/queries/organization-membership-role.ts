import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The queries of the `organization_membership_role` table (docs/architecture.md "Rules", data
 * access): the organization roles each membership holds. The read of role names joins
 * `organization_role` and lives here. Each function takes the caller's entity manager; every
 * statement is scoped by tenant id.
 */

/** Replaces the roles of one membership with `roleIds` (the caller checked they are the tenant's). */
export async function replaceMembershipRoles(
  tx: EntityManager, tenantId: string, organizationId: string, userId: string, roleIds: string[],
): Promise<void> {
  await tx.execute(
    'delete from organization_membership_role where tenant_id = ? and organization_id = ? and user_id = ?',
    [tenantId, organizationId, userId],
  );
  if (roleIds.length === 0) return;
  await tx.execute(
    `insert into organization_membership_role (organization_id, user_id, role_id, tenant_id) values ${roleIds.map(() => '(?, ?, ?, ?)').join(', ')}`,
    roleIds.flatMap((roleId) => [organizationId, userId, roleId, tenantId]),
  );
}

/** The role names each member of `organizationId` holds (only `userIds` when given), sorted by name. */
export async function findRoleNamesOfMembers(em: EntityManager, tenantId: string, organizationId: string, userIds?: string[]): Promise<Map<string, string[]>> {
  if (userIds && userIds.length === 0) return new Map();
  const only = userIds ? `and mr.user_id in (${userIds.map(() => '?').join(', ')})` : '';
  const rows = await em.execute<{ user_id: string; name: string }[]>(
    `select mr.user_id, r.name from organization_membership_role mr
       join organization_role r on r.id = mr.role_id and r.tenant_id = mr.tenant_id
      where mr.tenant_id = ? and mr.organization_id = ? ${only}
      order by r.name`,
    [tenantId, organizationId, ...(userIds ?? [])],
  );
  const byUser = new Map<string, string[]>();
  for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.name]);
  return byUser;
}
