import type { IndicatedResource } from '../oidc/token-access.js';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUniqueViolation } from '../../lib/errors.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import { ACCESS_CONTROL_ERRORS } from '../../errors/access-control.js';
import { deletePermissions, findPermissionsOfResources, insertPermissions, setPermissionDescription, type ApiPermissionRow } from '../../queries/api-permission.js';
import {
  deleteApiResource, findApiResource, findApiResourceForIndicator, findApiResourcesOfTenant, insertApiResource, renameApiResource, type ApiResourceRow,
} from '../../queries/api-resource.js';

/** A permission as the API shows it. */
export interface PermissionInput {
  name: string;
  description?: string;
}

/** An API resource as the API shows it (docs/oidc.md "Roles and permissions"). */
export interface ApiResourceView {
  id: string;
  name: string;
  identifier: string;
  permissions: { name: string; description: string }[];
  createdAt: Date;
}

export type { IndicatedResource } from '../oidc/token-access.js';

/** The name rule of a permission: 1 to 64 of `[A-Za-z0-9:._-]` (an OAuth scope token, RFC 6749 §3.3). */
export const PERMISSION_NAME = /^[A-Za-z0-9:._-]{1,64}$/;

const isLoopback = (host: string): boolean => host === 'localhost' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);

/**
 * Why `identifier` cannot name an API resource, or undefined when it can: an absolute `https://` URL
 * (or `http://` on a loopback host) without fragment or credentials (RFC 8707 §2: an absolute URI
 * without fragment).
 */
export function identifierProblem(identifier: string): string | undefined {
  let url: URL;
  try {
    url = new URL(identifier);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash || identifier.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined;
  return 'must be https:// (or http:// on a loopback host)';
}

/**
 * The origin a migrated (`legacy_origin`) API resource is matched by for an RFC 8707 `resource`
 * value: the value's `origin` when it is an http(s) URL, else null (only the exact identifier matches).
 */
export function indicatorOrigin(resource: string): string | null {
  if (!URL.canParse(resource)) return null;
  const url = new URL(resource);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
}

function toView(row: ApiResourceRow, permissions: ApiPermissionRow[]): ApiResourceView {
  return {
    id: row.id, name: row.name, identifier: row.identifier, createdAt: row.createdAt,
    permissions: permissions.filter((p) => p.resourceId === row.id).map((p) => ({ name: p.name, description: p.description })),
  };
}

function checkedPermissions(permissions: PermissionInput[]): { name: string; description: string }[] {
  const seen = new Set<string>();
  for (const p of permissions) {
    if (seen.has(p.name)) throw ACCESS_CONTROL_ERRORS.duplicatePermission({ permission: p.name });
    seen.add(p.name);
  }
  return permissions.map((p) => ({ name: p.name, description: p.description ?? '' }));
}

/**
 * The tenant's API resources and their permissions (docs/oidc.md "Roles and permissions"). Every
 * query is scoped by tenant; another tenant's id answers 404; every change takes the request's scope
 * (RequestScope) and is audited with its actor and metadata (`ApiResourceCreated`, `ApiResourceUpdated`,
 * `ApiResourceDeleted`) in its transaction.
 */
export class ApiResourceService {
  constructor(private readonly audit: AuditService) {}

  /**
   * Registers an API resource with its permissions.
   * @throws ApiError 400 `invalid_resource_identifier`, `duplicate_permission`; 409 `resource_identifier_taken`.
   */
  async create(
    scope: RequestScope, input: { name: string; identifier: string; permissions?: PermissionInput[] },
  ): Promise<ApiResourceView> {
    const { em, tenant } = scope;
    const problem = identifierProblem(input.identifier);
    if (problem) throw ACCESS_CONTROL_ERRORS.invalidIdentifier({ problem });
    const permissions = checkedPermissions(input.permissions ?? []);
    const now = new Date();
    const row: ApiResourceRow = { id: randomUUID(), tenantId: tenant.id, name: input.name, identifier: input.identifier, legacyOrigin: false, createdAt: now };
    const rows: ApiPermissionRow[] = permissions.map((p) => ({ id: randomUUID(), tenantId: tenant.id, resourceId: row.id, ...p, createdAt: now }));
    try {
      await em.transactional(async (tx) => {
        await insertApiResource(tx, row);
        await insertPermissions(tx, rows);
        await this.audit.record(withEm(scope, tx), {
          action: 'ApiResourceCreated', target: { type: 'api_resource', id: row.id },
          details: { name: row.name, identifier: row.identifier, permissions: permissions.map((p) => p.name) },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw ACCESS_CONTROL_ERRORS.identifierTaken();
      throw err;
    }
    return toView(row, rows);
  }

  /** The tenant's API resources with their permissions, oldest first. */
  async list(em: EntityManager, tenantId: string): Promise<ApiResourceView[]> {
    const rows = await findApiResourcesOfTenant(em, tenantId);
    const permissions = await findPermissionsOfResources(em, tenantId, rows.map((r) => r.id));
    return rows.map((row) => toView(row, permissions));
  }

  /** @throws ApiError 404 `not_found` when the tenant has no API resource with this id. */
  async get(em: EntityManager, tenantId: string, id: string): Promise<ApiResourceView> {
    const row = await this.row(em, tenantId, id);
    return toView(row, await findPermissionsOfResources(em, tenantId, [id]));
  }

  /**
   * Renames the resource and/or replaces its permissions: a permission kept by name keeps its place
   * in roles (its description may change), a permission left out is removed from every role.
   * @throws ApiError 404 `not_found`, 400 `duplicate_permission`.
   */
  async update(
    scope: RequestScope, id: string, changes: { name?: string; permissions?: PermissionInput[] },
  ): Promise<ApiResourceView> {
    const { em, tenant } = scope;
    const wanted = changes.permissions ? checkedPermissions(changes.permissions) : undefined;
    return em.transactional(async (tx) => {
      const row = await this.row(tx, tenant.id, id, true);
      const now = new Date();
      if (changes.name !== undefined && changes.name !== row.name) await renameApiResource(tx, tenant.id, id, changes.name, now);
      const details: Record<string, unknown> = { identifier: row.identifier, changed: Object.keys(changes).filter((k) => k === 'name' || k === 'permissions') };
      if (wanted) {
        const current = await findPermissionsOfResources(tx, tenant.id, [id]);
        const byName = new Map(current.map((p) => [p.name, p]));
        const wantedNames = new Set(wanted.map((p) => p.name));
        const removed = current.filter((p) => !wantedNames.has(p.name));
        const added = wanted.filter((p) => !byName.has(p.name));
        await deletePermissions(tx, tenant.id, removed.map((p) => p.id));
        for (const p of wanted) {
          const existing = byName.get(p.name);
          if (existing && existing.description !== p.description) await setPermissionDescription(tx, tenant.id, existing.id, p.description);
        }
        await insertPermissions(tx, added.map((p) => ({ id: randomUUID(), tenantId: tenant.id, resourceId: id, ...p, createdAt: now })));
        Object.assign(details, { permissionsAdded: added.map((p) => p.name), permissionsRemoved: removed.map((p) => p.name) });
      }
      await this.audit.record(withEm(scope, tx), { action: 'ApiResourceUpdated', target: { type: 'api_resource', id }, details });
      return toView({ ...row, name: changes.name ?? row.name }, await findPermissionsOfResources(tx, tenant.id, [id]));
    });
  }

  /**
   * Deletes the resource: its permissions leave every role, and it is no longer a valid `resource`
   * (tokens already issued for it stay valid until they expire).
   * @throws ApiError 404 `not_found`.
   */
  async delete(scope: RequestScope, id: string): Promise<void> {
    const { em, tenant } = scope;
    await em.transactional(async (tx) => {
      const row = await this.row(tx, tenant.id, id, true);
      await deleteApiResource(tx, tenant.id, id);
      await this.audit.record(withEm(scope, tx), {
        action: 'ApiResourceDeleted', target: { type: 'api_resource', id },
        details: { name: row.name, identifier: row.identifier },
      });
    });
  }

  /**
   * The resource an RFC 8707 `resource` value names (exact identifier; for a resource the migration
   * registered from a redirect-URI origin, any http(s) URL of that origin), with every permission
   * name; undefined when the tenant has none.
   */
  async forIndicator(em: EntityManager, tenantId: string, resource: string): Promise<IndicatedResource | undefined> {
    const row = await findApiResourceForIndicator(em, tenantId, resource, indicatorOrigin(resource));
    if (!row) return undefined;
    const permissions = await findPermissionsOfResources(em, tenantId, [row.id]);
    return { id: row.id, identifier: row.identifier, permissions: permissions.map((p) => p.name) };
  }

  private async row(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<ApiResourceRow> {
    const row = await findApiResource(em, tenantId, id, forUpdate);
    if (!row) throw ACCESS_CONTROL_ERRORS.apiResourceNotFound();
    return row;
  }
}
