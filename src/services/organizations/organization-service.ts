import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Organization } from '../../entities/organization.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import { isUuid } from '../../lib/uuid.js';
import type { AuditService } from '../audit/audit-service.js';
import { deleteOrganization, findOrganization, findOrganizationsAfter, insertOrganization, updateOrganization } from '../../queries/organization.js';
import { ORGANIZATION_ERRORS } from '../../errors/organization.js';
import { decodeCursor, encodeCursor } from './keyset-cursor.js';

/** Most organizations on one page of GET organizations. */
export const ORGANIZATIONS_PAGE_MAX_LIMIT = 200;
/** Page size when `limit` is not given. */
export const ORGANIZATIONS_PAGE_DEFAULT_LIMIT = 50;

/** One page of the organization list, oldest first, each with its count of live members. */
export interface OrganizationPage {
  items: (Organization & { memberCount: number })[];
  /** Opaque; pass it as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/** The changeable fields of an organization; `description: null` clears it. */
export interface OrganizationChanges {
  name?: string;
  description?: string | null;
}

/**
 * The tenant's organizations: its own customers, each with members of the tenant
 * (docs/organizations.md). Every query is scoped by tenant; another tenant's id answers 404. Every
 * change is audited in its transaction (and so delivered to the tenant's webhooks).
 * Its changes take the request's scope first (RequestScope: the workspace, the actor, the metadata)
 * and are audited with it.
 */
export class OrganizationService {
  constructor(private readonly audit: AuditService) {}

  /** Creates an organization; audits `OrganizationCreated`. */
  async create(scope: RequestScope, input: { name: string; description?: string | null }): Promise<Organization> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    const now = new Date();
    const organization: Organization = {
      id: randomUUID(), tenantId, name: input.name, description: input.description ?? null, createdAt: now, updatedAt: now,
    };
    await em.transactional(async (tx) => {
      await insertOrganization(tx, organization);
      await this.audit.record(withEm(scope, tx), {
        action: 'OrganizationCreated', target: { type: 'organization', id: organization.id },
        details: { name: organization.name },
      });
    });
    return organization;
  }

  /**
   * One page of the tenant's organizations, oldest first (ties by id), whose name contains `search`
   * (case-insensitive): keyset pagination on (created_at, id), so every page costs the same.
   * @param limit 1 to ORGANIZATIONS_PAGE_MAX_LIMIT.
   * @param cursor the `nextCursor` of the previous page, or undefined for the first page.
   * @throws ApiError 400 `invalid_cursor`.
   */
  async list(em: EntityManager, tenantId: string, options: { search?: string; limit: number; cursor?: string }): Promise<OrganizationPage> {
    const after = options.cursor ? decodeCursor(options.cursor) : undefined;
    const rows = await findOrganizationsAfter(em, tenantId, options.search, after, options.limit + 1);
    const page = rows.slice(0, options.limit);
    const last = page.at(-1);
    return {
      items: page.map((row) => ({ ...row.organization, memberCount: row.memberCount })),
      nextCursor: rows.length > options.limit && last ? encodeCursor(last.createdAtText, last.organization.id) : null,
    };
  }

  /** @throws ApiError 404 `not_found` when the tenant has no organization with this id. */
  async get(em: EntityManager, tenantId: string, id: string): Promise<Organization> {
    return this.row(em, tenantId, id);
  }

  /**
   * Renames an organization or changes its description; audits `OrganizationUpdated` with the changed fields.
   * @throws ApiError 404 `not_found`.
   */
  async update(scope: RequestScope, id: string, changes: OrganizationChanges): Promise<Organization> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    return em.transactional(async (tx) => {
      const current = await this.row(tx, tenantId, id, true);
      const updated = await updateOrganization(tx, tenantId, id, {
        name: changes.name ?? current.name,
        description: changes.description === undefined ? current.description : changes.description,
      }, new Date());
      await this.audit.record(withEm(scope, tx), {
        action: 'OrganizationUpdated', target: { type: 'organization', id },
        details: { name: updated.name, changed: Object.keys(changes) },
      });
      return updated;
    });
  }

  /**
   * Deletes an organization: its memberships (and their roles) and its open invites go with it.
   * Audits `OrganizationDeleted`.
   * @throws ApiError 404 `not_found`.
   */
  async delete(scope: RequestScope, id: string): Promise<void> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    await em.transactional(async (tx) => {
      const current = await this.row(tx, tenantId, id, true);
      await deleteOrganization(tx, tenantId, id);
      await this.audit.record(withEm(scope, tx), {
        action: 'OrganizationDeleted', target: { type: 'organization', id }, details: { name: current.name },
      });
    });
  }

  /** @throws ApiError 404 `not_found`. */
  private async row(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<Organization> {
    const row = isUuid(id) ? await findOrganization(em, tenantId, id, forUpdate) : undefined;
    if (!row) throw ORGANIZATION_ERRORS.organizationNotFound();
    return row;
  }
}
