import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { User } from '../../entities/user.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import { isUuid } from '../../lib/uuid.js';
import type { AuditService } from '../audit/audit-service.js';
import { toApplication, type Application } from '../oidc/application-service.js';
import { findApplicationsByIds } from '../../queries/oidc-application.js';
import { USER_ERRORS } from '../../errors/user.js';
import { findLiveUsersByIds } from '../../queries/user.js';
import { ACCESS_CONTROL_ERRORS } from '../../errors/access-control.js';
import { findPermissionsOfRoles, replaceRolePermissions, type RolePermissionRow } from '../../queries/access-role-permission.js';
import {
  deleteRole, findRole, findRoleHoldersAfter, findRolesOfTenant, insertRole, updateRole, type AccessRoleRow, type RoleHolderKind,
} from '../../queries/access-role.js';
import { findPermissionsOfResources } from '../../queries/api-permission.js';
import { findApiResourcesByIdentifiers } from '../../queries/api-resource.js';

/** One permission of a role: an API resource's identifier and one of its permission names. */
export interface RolePermission {
  resource: string;
  permission: string;
}

/** A role as the API shows it (docs/oidc.md "Roles and permissions"). */
export interface RoleView {
  id: string;
  name: string;
  description: string;
  permissions: RolePermission[];
  createdAt: Date;
}

/** Most holders on one page of GET roles/{id}/members. */
export const ROLE_MEMBERS_PAGE_MAX_LIMIT = 200;
/** Page size when `limit` is not given. */
export const ROLE_MEMBERS_PAGE_DEFAULT_LIMIT = 50;

/** One holder of a role: a live user of the tenant, or one of its applications (docs/authorization.md "Members of a role"). */
export type RoleMember = { type: 'user'; user: User } | { type: 'application'; application: Application };

/** One page of a role's holders. */
export interface RoleMemberPage {
  items: RoleMember[];
  /** Opaque; pass it as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

const CURSOR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;
const HOLDER_KINDS: readonly string[] = ['user', 'application'] satisfies RoleHolderKind[];

function encodeMembersCursor(assignedAt: string, kind: RoleHolderKind, id: string): string {
  return Buffer.from(JSON.stringify([assignedAt, kind, id])).toString('base64url');
}

/** @throws ApiError 400 `invalid_cursor` for anything `encodeMembersCursor` did not make. */
function decodeMembersCursor(cursor: string): [string, RoleHolderKind, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === 'string')) {
      const [assignedAt, kind, id] = value as [string, string, string];
      if (CURSOR_TIMESTAMP.test(assignedAt) && HOLDER_KINDS.includes(kind) && isUuid(id)) return [assignedAt, kind as RoleHolderKind, id];
    }
  } catch {
    // falls through to the refusal
  }
  throw USER_ERRORS.invalidCursor();
}

/** Shapes roles with their permissions (read by one query for all of them). */
export function toRoleViews(roles: AccessRoleRow[], permissions: RolePermissionRow[]): RoleView[] {
  return roles.map((role) => ({
    id: role.id, name: role.name, description: role.description, createdAt: role.createdAt,
    permissions: permissions.filter((p) => p.roleId === role.id).map((p) => ({ resource: p.resource, permission: p.permission })),
  }));
}

/**
 * The tenant's own roles: named bundles of permissions of its API resources (docs/oidc.md "Roles and permissions").
 * Unrelated to the built-in `Admin`/`Member` role. Every query is scoped by tenant; another tenant's
 * id answers 404; every change takes the request's scope (RequestScope: the workspace, the actor, the
 * metadata) and is audited with it (`RoleCreated`, `RoleUpdated`, `RoleDeleted`) in its transaction.
 */
export class RoleService {
  constructor(private readonly audit: AuditService) {}

  /**
   * Creates a role.
   * @throws ApiError 400 `unknown_resource`, `unknown_permission`; 409 `role_name_taken`.
   */
  async create(
    scope: RequestScope, input: { name: string; description?: string; permissions: RolePermission[] },
  ): Promise<RoleView> {
    const { em, tenant } = scope;
    const row: AccessRoleRow = { id: randomUUID(), tenantId: tenant.id, name: input.name, description: input.description ?? '', createdAt: new Date() };
    return this.uniqueName(() =>
      em.transactional(async (tx) => {
        const permissionIds = await this.permissionIds(tx, tenant.id, input.permissions);
        await insertRole(tx, row);
        await replaceRolePermissions(tx, tenant.id, row.id, permissionIds);
        await this.audit.record(withEm(scope, tx), {
          action: 'RoleCreated', target: { type: 'role', id: row.id },
          details: { name: row.name, permissions: input.permissions },
        });
        return this.view(tx, tenant.id, row);
      }),
    );
  }

  /** The tenant's roles with their permissions, oldest first. */
  async list(em: EntityManager, tenantId: string): Promise<RoleView[]> {
    const roles = await findRolesOfTenant(em, tenantId);
    return toRoleViews(roles, await findPermissionsOfRoles(em, tenantId, roles.map((r) => r.id)));
  }

  /** @throws ApiError 404 `not_found` when the tenant has no role with this id. */
  async get(em: EntityManager, tenantId: string, id: string): Promise<RoleView> {
    return this.view(em, tenantId, await this.row(em, tenantId, id));
  }

  /**
   * One page of who holds the tenant's role (docs/authorization.md "Members of a role"): its live
   * users (soft-deleted ones left out) and its applications, ordered by when the holder's roles were
   * last set, then kind, then id; keyset pagination, so a page costs the same however deep it is.
   * @param limit 1 to ROLE_MEMBERS_PAGE_MAX_LIMIT.
   * @param cursor the `nextCursor` of the previous page, or undefined for the first page.
   * @throws ApiError 404 `not_found` (no such role in this tenant), 400 `invalid_cursor`.
   */
  async members(em: EntityManager, tenantId: string, id: string, options: { limit: number; cursor?: string }): Promise<RoleMemberPage> {
    const after = options.cursor ? decodeMembersCursor(options.cursor) : undefined;
    await this.row(em, tenantId, id);
    const rows = await findRoleHoldersAfter(em, tenantId, id, after, options.limit + 1);
    const page = rows.slice(0, options.limit);
    const userIds = page.filter((h) => h.kind === 'user').map((h) => h.id);
    const applicationIds = page.filter((h) => h.kind === 'application').map((h) => h.id);
    const users = new Map((await findLiveUsersByIds(em, tenantId, userIds)).map((u) => [u.id, u]));
    const applications = new Map((await findApplicationsByIds(em, tenantId, applicationIds)).map((a) => [a.id, toApplication(a)]));
    const items: RoleMember[] = [];
    for (const holder of page) {
      // a holder deleted between the two reads is left out of the page
      const user = holder.kind === 'user' ? users.get(holder.id) : undefined;
      const application = holder.kind === 'application' ? applications.get(holder.id) : undefined;
      if (user) items.push({ type: 'user', user });
      if (application) items.push({ type: 'application', application });
    }
    const last = page.at(-1);
    return { items, nextCursor: rows.length > options.limit && last ? encodeMembersCursor(last.assignedAtText, last.kind, last.id) : null };
  }

  /**
   * Renames the role, changes its description, and/or replaces its permissions; holders' next tokens
   * carry the new set.
   * @throws ApiError 404 `not_found`, 400 `unknown_resource`, `unknown_permission`, 409 `role_name_taken`.
   */
  async update(
    scope: RequestScope, id: string, changes: { name?: string; description?: string; permissions?: RolePermission[] },
  ): Promise<RoleView> {
    const { em, tenant } = scope;
    return this.uniqueName(() =>
      em.transactional(async (tx) => {
        const row = await this.row(tx, tenant.id, id, true);
        const next = { ...row, name: changes.name ?? row.name, description: changes.description ?? row.description };
        if (next.name !== row.name || next.description !== row.description) await updateRole(tx, tenant.id, id, next, new Date());
        if (changes.permissions) await replaceRolePermissions(tx, tenant.id, id, await this.permissionIds(tx, tenant.id, changes.permissions));
        await this.audit.record(withEm(scope, tx), {
          action: 'RoleUpdated', target: { type: 'role', id },
          details: { name: next.name, changed: Object.keys(changes).filter((k) => ['name', 'description', 'permissions'].includes(k)), ...(changes.permissions ? { permissions: changes.permissions } : {}) },
        });
        return this.view(tx, tenant.id, next);
      }),
    );
  }

  /** Deletes the role: every user and application holding it loses it. @throws ApiError 404 `not_found`. */
  async delete(scope: RequestScope, id: string): Promise<void> {
    const { em, tenant } = scope;
    await em.transactional(async (tx) => {
      const row = await this.row(tx, tenant.id, id, true);
      await deleteRole(tx, tenant.id, id);
      await this.audit.record(withEm(scope, tx), { action: 'RoleDeleted', target: { type: 'role', id }, details: { name: row.name } });
    });
  }

  private async view(em: EntityManager, tenantId: string, row: AccessRoleRow): Promise<RoleView> {
    return toRoleViews([row], await findPermissionsOfRoles(em, tenantId, [row.id]))[0]!;
  }

  /** The permission ids named by `(resource identifier, permission name)` pairs, each checked. */
  private async permissionIds(em: EntityManager, tenantId: string, wanted: RolePermission[]): Promise<string[]> {
    const identifiers = [...new Set(wanted.map((p) => p.resource))];
    const resources = await findApiResourcesByIdentifiers(em, tenantId, identifiers);
    const resourceIdOf = new Map(resources.map((r) => [r.identifier, r.id]));
    const unknown = identifiers.find((identifier) => !resourceIdOf.has(identifier));
    if (unknown !== undefined) throw ACCESS_CONTROL_ERRORS.unknownResource({ identifier: unknown });
    const permissions = await findPermissionsOfResources(em, tenantId, resources.map((r) => r.id));
    const idOf = new Map(permissions.map((p) => [`${p.resourceId} ${p.name}`, p.id]));
    const ids = new Set<string>();
    for (const p of wanted) {
      const id = idOf.get(`${resourceIdOf.get(p.resource)!} ${p.permission}`);
      if (!id) throw ACCESS_CONTROL_ERRORS.unknownPermission({ resource: p.resource, permission: p.permission });
      ids.add(id);
    }
    return [...ids];
  }

  private async row(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<AccessRoleRow> {
    const row = await findRole(em, tenantId, id, forUpdate);
    if (!row) throw ACCESS_CONTROL_ERRORS.roleNotFound();
    return row;
  }

  private async uniqueName<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (isUniqueViolation(err)) throw ACCESS_CONTROL_ERRORS.roleNameTaken();
      throw err;
    }
  }
}
