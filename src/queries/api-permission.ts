import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPooled } from '../db/pooled-query.js';
import type { ApiPermission } from '../entities/access-control.js';

/**
 * The queries of the `api_permission` table (docs/architecture.md "Rules", data access): the
 * permissions of the tenant's API resources. The statements that answer "which permissions of a
 * resource does this user / application hold" join `api_resource`, `access_role_permission` and the
 * assignment tables; they live here because they read permissions. Every statement is scoped by
 * tenant id.
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

/** The API resource an RFC 8707 `resource` value names, with the permission names a token for it may carry. */
export interface IndicatedGrantRow {
  resourceId: string;
  identifier: string;
  /** The permission names granted (and asked for, when the caller narrowed to `requested`), unordered. */
  permissions: string[];
}

/** Who holds the roles whose permissions are read: a user by id, or an application by its client id. */
export type GrantHolder = { userId: string } | { clientId: string };

// The resource as findApiResourceForIndicator picks it ($2 the value, $3 its origin or the value),
// then its permissions that a role of the holder grants ($4), each once, narrowed to $5 unless null.
// The holder's roles are reached through its assignment table; an application by client id, so the
// caller needs no look-up of its row. `exists` keeps a permission held through several roles single.
const grantStatement = (holder: 'user' | 'client'): string => `
  with target as (
    select id, identifier from api_resource
     where tenant_id = $1 and (identifier = $2 or (legacy_origin and identifier = $3))
     order by (identifier = $2) desc limit 1
  )
  select t.id, t.identifier, array(
    select p.name from api_permission p
     where p.tenant_id = $1 and p.resource_id = t.id and ($5::text[] is null or p.name = any($5::text[]))
       and exists (
         select 1 from access_role_permission rp
         ${holder === 'user'
           ? 'join user_access_role h on h.role_id = rp.role_id and h.tenant_id = rp.tenant_id and h.user_id = $4'
           : `join application_access_role h on h.role_id = rp.role_id and h.tenant_id = rp.tenant_id
         join oidc_application a on a.id = h.application_id and a.tenant_id = h.tenant_id and a.client_id = $4`}
          where rp.tenant_id = $1 and rp.permission_id = p.id)
  ) as granted
  from target t`;
const GRANT_TO_USER = grantStatement('user');
const GRANT_TO_CLIENT = grantStatement('client');

/**
 * In one statement: the tenant's API resource that `resource` names (the exact identifier, else a
 * migrated resource whose identifier is `origin`, as findApiResourceForIndicator) and the names of
 * its permissions that a role of `holder` grants, narrowed to `requested` when given (the scope a
 * `client_credentials` request asked for). The token-issuing hot path (docs/performance.md "OpenID
 * provider grants"): sent to `pg` directly on a pooled connection (queryPooled), outside any
 * transaction. An unknown client id holds nothing; `userId` is a user's id (a UUID).
 * @returns undefined when the tenant has no such resource.
 */
export async function findIndicatedResourceGrant(
  em: EntityManager, tenantId: string, resource: string, origin: string | null, holder: GrantHolder, requested?: readonly string[],
): Promise<IndicatedGrantRow | undefined> {
  const rows = await queryPooled<{ id: string; identifier: string; granted: string[] }>(em, 'userId' in holder ? GRANT_TO_USER : GRANT_TO_CLIENT, [
    tenantId, resource, origin ?? resource, 'userId' in holder ? holder.userId : holder.clientId, requested ? [...requested] : null,
  ]);
  const row = rows[0];
  return row ? { resourceId: row.id, identifier: row.identifier, permissions: row.granted } : undefined;
}
