import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrganizationRole } from '../../entities/organization.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import { isUuid } from '../../lib/uuid.js';
import type { AuditService } from '../audit/audit-service.js';
import { ORGANIZATION_ERRORS } from '../../errors/organization.js';
import {
  deleteOrganizationRole, findOrganizationRole, findOrganizationRolesByName, findOrganizationRolesOfTenant, insertOrganizationRole,
  updateOrganizationRole,
} from '../../queries/organization-role.js';

/** What an organization role is made of. */
export interface OrganizationRoleInput {
  name: string;
  description?: string | null;
  /** Organization permission names (`[A-Za-z0-9:._-]{1,64}`); duplicates are dropped. */
  permissions: string[];
}

const nameTaken = () => ORGANIZATION_ERRORS.roleNameTaken();

/**
 * The tenant's organization-role template (docs/organizations.md "Roles"): the same roles in every
 * organization of the tenant, each granting organization permission names (not API resources, which
 * belong to the tenant's own roles and permissions). Names are unique in the tenant (409). Every change is audited.
 * Its changes take the request's scope first (RequestScope: the workspace, the actor, the metadata)
 * and are audited with it.
 */
export class OrganizationRoleService {
  constructor(private readonly audit: AuditService) {}

  /**
   * Creates a role; audits `OrganizationRoleCreated`.
   * @throws ApiError 409 `organization_role_name_taken`.
   */
  async create(scope: RequestScope, input: OrganizationRoleInput): Promise<OrganizationRole> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    const now = new Date();
    const role: OrganizationRole = {
      id: randomUUID(), tenantId, name: input.name, description: input.description ?? null, permissions: [...new Set(input.permissions)],
      createdAt: now, updatedAt: now,
    };
    try {
      await em.transactional(async (tx) => {
        await insertOrganizationRole(tx, role);
        await this.audit.record(withEm(scope, tx), {
          action: 'OrganizationRoleCreated', target: { type: 'organization_role', id: role.id },
          details: { name: role.name, permissions: role.permissions },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
    return role;
  }

  /** The tenant's organization roles, by name. */
  async list(em: EntityManager, tenantId: string): Promise<OrganizationRole[]> {
    return findOrganizationRolesOfTenant(em, tenantId);
  }

  /** @throws ApiError 404 `not_found`. */
  async get(em: EntityManager, tenantId: string, id: string): Promise<OrganizationRole> {
    return this.row(em, tenantId, id);
  }

  /**
   * Renames a role, changes its description or replaces its permissions; the members holding it
   * hold the new permissions at once. Audits `OrganizationRoleUpdated`.
   * @throws ApiError 404 `not_found`, 409 `organization_role_name_taken`.
   */
  async update(
    scope: RequestScope, id: string, changes: Partial<OrganizationRoleInput>,
  ): Promise<OrganizationRole> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    try {
      return await em.transactional(async (tx) => {
        const current = await this.row(tx, tenantId, id, true);
        const updated = await updateOrganizationRole(tx, tenantId, id, {
          name: changes.name ?? current.name,
          description: changes.description === undefined ? current.description : changes.description,
          permissions: changes.permissions ? [...new Set(changes.permissions)] : current.permissions,
        }, new Date());
        await this.audit.record(withEm(scope, tx), {
          action: 'OrganizationRoleUpdated', target: { type: 'organization_role', id },
          details: { name: updated.name, changed: Object.keys(changes), permissions: updated.permissions },
        });
        return updated;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }

  /**
   * Deletes a role: every membership holding it loses it. Audits `OrganizationRoleDeleted`.
   * @throws ApiError 404 `not_found`.
   */
  async delete(scope: RequestScope, id: string): Promise<void> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    await em.transactional(async (tx) => {
      const current = await this.row(tx, tenantId, id, true);
      await deleteOrganizationRole(tx, tenantId, id);
      await this.audit.record(withEm(scope, tx), {
        action: 'OrganizationRoleDeleted', target: { type: 'organization_role', id }, details: { name: current.name },
      });
    });
  }

  /**
   * The roles of the tenant named in `names` (duplicates ignored), kept from deletion until the
   * caller's transaction ends. With `dropUnknown` (an invitation accepted after a role it names was
   * deleted) unknown names are left out instead.
   * @throws ApiError 400 `unknown_organization_role` (the message names the unknown roles).
   */
  async resolve(tx: EntityManager, tenantId: string, names: string[], options: { dropUnknown?: boolean } = {}): Promise<OrganizationRole[]> {
    const wanted = [...new Set(names)];
    const roles = await findOrganizationRolesByName(tx, tenantId, wanted);
    const known = new Set(roles.map((role) => role.name));
    const unknown = wanted.filter((name) => !known.has(name));
    if (unknown.length > 0 && !options.dropUnknown) {
      throw ORGANIZATION_ERRORS.unknownRole({ names: unknown });
    }
    return roles;
  }

  /** @throws ApiError 404 `not_found`. */
  private async row(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<OrganizationRole> {
    const row = isUuid(id) ? await findOrganizationRole(em, tenantId, id, forUpdate) : undefined;
    if (!row) throw ORGANIZATION_ERRORS.roleNotFound();
    return row;
  }
}
