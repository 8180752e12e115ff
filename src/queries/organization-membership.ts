import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../db/rows.js';
import { UserSchema, type User } from '../entities/user.js';

/**
 * The queries of the `organization_membership` table (docs/architecture.md "Rules", data access):
 * which users of the tenant belong to which of its organizations (docs/organizations.md "Members").
 * Reads join `app_user` and keep live users only: a soft-deleted user's memberships are never shown
 * (erasure deletes them with the user row). The reads of a person's organizations also join
 * `organization`, `organization_membership_role` and `organization_role` and live here, the table
 * they mainly read. Each function takes the caller's entity manager; every statement is scoped by tenant id.
 */

/** One organization of a person, with the names of the roles the membership holds (sorted). */
export interface MembershipOfUser {
  id: string;
  name: string;
  roles: string[];
}

/** A JSON array column, which the driver may hand back as text. */
const jsonArray = (value: string[] | string): string[] => (typeof value === 'string' ? (JSON.parse(value) as string[]) : value);

/**
 * Makes `userId` a member of `organizationId`.
 * @returns false when they were a member already.
 */
export async function insertMembership(em: EntityManager, tenantId: string, organizationId: string, userId: string, now: Date): Promise<boolean> {
  const rows = await em.execute<{ user_id: string }[]>(
    `insert into organization_membership (organization_id, user_id, tenant_id, created_at) values (?, ?, ?, ?)
     on conflict do nothing returning user_id`,
    [organizationId, userId, tenantId, now],
  );
  return rows.length > 0;
}

/** Whether the live user `userId` is a member of `organizationId` (the row locked `FOR UPDATE` with `forUpdate`). */
export async function isMember(em: EntityManager, tenantId: string, organizationId: string, userId: string, forUpdate = false): Promise<boolean> {
  const rows = await em.execute<{ user_id: string }[]>(
    `select m.user_id from organization_membership m join app_user u on u.id = m.user_id and u.tenant_id = m.tenant_id
      where m.tenant_id = ? and m.organization_id = ? and m.user_id = ? and u.deleted_at is null${forUpdate ? ' for update of m' : ''}`,
    [tenantId, organizationId, userId],
  );
  return rows.length > 0;
}

const MEMBER_CURSOR_COLUMN = 'page_cursor_membership_created_at';

/**
 * Up to `limit` live users who are members of `organizationId`, oldest membership first (ties by user
 * id), after the keyset `after` (the membership's `created_at` as UTC text at microsecond precision,
 * and the user id), each with that text for the next cursor. Read in order through
 * `organization_membership_org_created_idx`, so a page costs the same in an organization of 6 members
 * as of 40,000 (docs/performance.md "Organizations at scale").
 */
export async function findMemberUsersAfter(
  em: EntityManager, tenantId: string, organizationId: string, after: [string, string] | undefined, limit: number,
): Promise<{ user: User; createdAtText: string }[]> {
  const keyset = after ? `and (m.created_at, m.user_id) > (?::timestamp at time zone 'UTC', ?::uuid)` : '';
  const rows = await em.execute<Record<string, unknown>[]>(
    `select u.*, to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as ${MEMBER_CURSOR_COLUMN}
       from organization_membership m join app_user u on u.id = m.user_id and u.tenant_id = m.tenant_id
      where m.tenant_id = ? and m.organization_id = ? and u.deleted_at is null ${keyset}
      order by m.created_at, m.user_id
      limit ?`,
    [tenantId, organizationId, ...(after ? [after[0], after[1]] : []), limit],
  );
  return rows.map(({ [MEMBER_CURSOR_COLUMN]: cursor, ...row }) => ({ user: rowToEntity(em, UserSchema, row), createdAtText: String(cursor) }));
}

/** Removes `userId` from `organizationId` (their roles there cascade). @returns false when they were not a member. */
export async function deleteMembership(em: EntityManager, tenantId: string, organizationId: string, userId: string): Promise<boolean> {
  const rows = await em.execute<{ user_id: string }[]>(
    'delete from organization_membership where tenant_id = ? and organization_id = ? and user_id = ? returning user_id',
    [tenantId, organizationId, userId],
  );
  return rows.length > 0;
}

/**
 * The organizations the user belongs to, by name, each with the names of the roles they hold there
 * (served by the `(tenant_id, user_id)` index). Empty for a soft-deleted user.
 */
export async function findOrganizationsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<MembershipOfUser[]> {
  const rows = await em.execute<{ id: string; name: string; roles: string[] | string }[]>(
    `select o.id, o.name,
            coalesce(json_agg(r.name order by r.name) filter (where r.name is not null), '[]'::json) as roles
       from organization_membership m
       join app_user u on u.id = m.user_id and u.tenant_id = m.tenant_id and u.deleted_at is null
       join organization o on o.id = m.organization_id and o.tenant_id = m.tenant_id
       left join organization_membership_role mr on mr.organization_id = m.organization_id and mr.user_id = m.user_id
       left join organization_role r on r.id = mr.role_id and r.tenant_id = m.tenant_id
      where m.tenant_id = ? and m.user_id = ?
      group by o.id, o.name
      order by o.name, o.id`,
    [tenantId, userId],
  );
  return rows.map((row) => ({ id: row.id, name: row.name, roles: jsonArray(row.roles) }));
}

/** One membership of a person as the personal-data export shows it (docs/lifecycle.md "Data export"). */
export interface MembershipForExport {
  organizationId: string;
  organizationName: string;
  /** When the person became a member (the membership row's `created_at`). */
  joinedAt: Date;
  /** The names of the organization roles the membership holds, sorted; empty when none. */
  roles: string[];
}

/**
 * Every organization membership the tenant holds of `userId`, soft-deleted user included (their
 * memberships are held until the erasure sweep deletes them with the user row), oldest membership
 * first (ties by organization id): the organization's id and name, when they joined, and the names of
 * their roles there. Served by the `(tenant_id, user_id)` index. Read by the personal-data export
 * (docs/lifecycle.md "Data export"); empty when the tenant holds none.
 */
export async function findMembershipsOfUserForExport(em: EntityManager, tenantId: string, userId: string): Promise<MembershipForExport[]> {
  const rows = await em.execute<{ organization_id: string; name: string; created_at: Date | string; roles: string[] | string }[]>(
    `select o.id as organization_id, o.name, m.created_at,
            coalesce(json_agg(r.name order by r.name) filter (where r.name is not null), '[]'::json) as roles
       from organization_membership m
       join organization o on o.id = m.organization_id and o.tenant_id = m.tenant_id
       left join organization_membership_role mr on mr.tenant_id = m.tenant_id and mr.organization_id = m.organization_id and mr.user_id = m.user_id
       left join organization_role r on r.id = mr.role_id and r.tenant_id = m.tenant_id
      where m.tenant_id = ? and m.user_id = ?
      group by o.id, o.name, m.created_at
      order by m.created_at, o.id`,
    [tenantId, userId],
  );
  return rows.map((row) => ({ organizationId: row.organization_id, organizationName: row.name, joinedAt: new Date(row.created_at), roles: jsonArray(row.roles) }));
}

/**
 * The organization permissions the live user `userId` holds in `organizationId` through the roles of
 * their membership (distinct, sorted; empty for a member without roles), or undefined when they are
 * not a member of the tenant's organization (unknown, another tenant's, removed, deleted, or the user
 * soft-deleted). Read for every organization token, so a change applies to the next one.
 */
export async function findPermissionsOfMember(em: EntityManager, tenantId: string, organizationId: string, userId: string): Promise<string[] | undefined> {
  const rows = await em.execute<{ permissions: string[] | string }[]>(
    `select coalesce(json_agg(distinct p.permission order by p.permission) filter (where p.permission is not null), '[]'::json) as permissions
       from organization_membership m
       join app_user u on u.id = m.user_id and u.tenant_id = m.tenant_id and u.deleted_at is null
       left join organization_membership_role mr on mr.tenant_id = m.tenant_id and mr.organization_id = m.organization_id and mr.user_id = m.user_id
       left join organization_role r on r.id = mr.role_id and r.tenant_id = m.tenant_id
       left join lateral jsonb_array_elements_text(r.permissions) as p(permission) on true
      where m.tenant_id = ? and m.organization_id = ? and m.user_id = ?
      group by m.organization_id, m.user_id`,
    [tenantId, organizationId, userId],
  );
  return rows[0] ? jsonArray(rows[0].permissions) : undefined;
}
