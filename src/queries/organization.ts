import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../db/rows.js';
import { OrganizationSchema, type Organization } from '../entities/organization.js';

/**
 * The queries of the `organization` table (docs/architecture.md "Rules", data access): the tenant's
 * own customers (docs/organizations.md). Each function takes the caller's entity manager (pass the
 * transaction when it must run in one; the caller owns it); every statement is scoped by tenant id.
 */

const CURSOR_COLUMN = 'page_cursor_created_at';

/** `LIKE` pattern of a literal substring, lower-cased: `%`, `_` and the escape character escaped. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Inserts an organization. */
export async function insertOrganization(em: EntityManager, organization: Organization): Promise<void> {
  await em.execute(
    'insert into organization (id, tenant_id, name, description, created_at, updated_at) values (?, ?, ?, ?, ?, ?)',
    [organization.id, organization.tenantId, organization.name, organization.description, organization.createdAt, organization.updatedAt],
  );
}

/** The tenant's organization `id` (locked `FOR UPDATE` with `forUpdate`, inside the caller's transaction), or undefined. */
export async function findOrganization(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<Organization | undefined> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select * from organization where id = ? and tenant_id = ?${forUpdate ? ' for update' : ''}`,
    [id, tenantId],
  );
  return rows[0] ? rowToEntity(em, OrganizationSchema, rows[0]) : undefined;
}

const MEMBER_COUNT_COLUMN = 'member_count__';

/**
 * Up to `limit` organizations of the tenant whose name contains `search` (case-insensitive), oldest
 * first (ties by id), after the keyset `after` (`created_at` as UTC text at microsecond precision,
 * and the id), each with its `created_at` text for the next cursor and its count of live members.
 * The page is read through the `(tenant_id, created_at, id)` index, or for a search matching few
 * names through the trigram index on `lower(name)` and a sort. The tenant's soft-deleted users are
 * read once (an index-only scan of `app_user_tenant_deleted_idx`) into a hash; a member count is an
 * index-only scan of `organization_membership_org_created_idx` leaving out the members in that hash
 * (a membership's user is always a user of its tenant, and erasure deletes the membership). No
 * member's row is read, so an organization of 40,000 members costs a few milliseconds, not a
 * look-up per member (docs/performance.md "Organizations at scale"). The CTE is materialized so
 * that the planner hashes it once for the page instead of probing the users' index per member.
 */

export async function findOrganizationsAfter(
  em: EntityManager,
  tenantId: string,
  search: string | undefined,
  after: [string, string] | undefined,
  limit: number,
): Promise<{ organization: Organization; createdAtText: string; memberCount: number }[]> {
  const keyset = after ? `and (created_at, id) > (?::timestamp at time zone 'UTC', ?::uuid)` : '';
  const filter = search ? `and lower(name) like ? escape '\\'` : '';
  const rows = await em.execute<Record<string, unknown>[]>(
    `with deleted_user as materialized (select id from app_user where tenant_id = ? and deleted_at is not null)
     select *, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as ${CURSOR_COLUMN},
            (select count(*) from organization_membership m
              where m.organization_id = organization.id and m.tenant_id = ?
                and not exists (select 1 from deleted_user d where d.id = m.user_id))::int as ${MEMBER_COUNT_COLUMN}
       from organization
      where tenant_id = ? ${keyset} ${filter}
      order by created_at, id
      limit ?`,
    [tenantId, tenantId, tenantId, ...(after ? [after[0], after[1]] : []), ...(search ? [containsPattern(search)] : []), limit],
  );
  return rows.map(({ [CURSOR_COLUMN]: cursor, [MEMBER_COUNT_COLUMN]: memberCount, ...row }) => ({
    organization: rowToEntity(em, OrganizationSchema, row),
    createdAtText: String(cursor),
    memberCount: Number(memberCount),
  }));
}

/** Sets the name and description of the tenant's organization `id`. @returns it as stored. */
export async function updateOrganization(
  em: EntityManager, tenantId: string, id: string, fields: Pick<Organization, 'name' | 'description'>, now: Date,
): Promise<Organization> {
  const rows = await em.execute<Record<string, unknown>[]>(
    'update organization set name = ?, description = ?, updated_at = ? where id = ? and tenant_id = ? returning *',
    [fields.name, fields.description, now, id, tenantId],
  );
  return rowToEntity(em, OrganizationSchema, rows[0]!);
}

/** Deletes the tenant's organization `id`; its memberships, their roles and its open invites cascade. */
export async function deleteOrganization(em: EntityManager, tenantId: string, id: string): Promise<void> {
  await em.execute('delete from organization where id = ? and tenant_id = ?', [id, tenantId]);
}
