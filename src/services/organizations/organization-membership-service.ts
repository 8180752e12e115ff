import type { EntityManager } from '@mikro-orm/postgresql';
import type { User } from '../../entities/user.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import { isUuid } from '../../lib/uuid.js';
import type { AuditService } from '../audit/audit-service.js';
import { findLiveUserById } from '../../queries/user.js';
import { ORGANIZATION_ERRORS } from '../../errors/organization.js';
import { decodeCursor, encodeCursor } from './keyset-cursor.js';
import { deleteMembership, findMemberUsersAfter, findOrganizationsOfUser, insertMembership, isMember, type MembershipOfUser } from '../../queries/organization-membership.js';
import { findRoleNamesOfMembers, replaceMembershipRoles } from '../../queries/organization-membership-role.js';
import { findOrganization } from '../../queries/organization.js';
import type { OrganizationRoleService } from './organization-role-service.js';
import { USER_ERRORS } from '../../errors/user.js';

export type { MembershipOfUser };

/** A member of an organization: the live user and the names of the organization roles they hold there. */
export interface Member {
  user: User;
  roles: string[];
}

/** One page of an organization's members (GET organizations/{id}/members). */
export interface MemberPage {
  items: Member[];
  /** Opaque; pass it as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/** Most members on one page of GET organizations/{id}/members. */
export const MEMBERS_PAGE_MAX_LIMIT = 200;
/** Page size when `limit` is not given. */
export const MEMBERS_PAGE_DEFAULT_LIMIT = 100;

/**
 * Memberships (docs/organizations.md "Members"): a user of the tenant in any number of its
 * organizations, with organization roles per membership. The user and the organization must both be
 * the tenant's (404 otherwise). A soft-deleted user's memberships are never shown and count nowhere;
 * erasing the user or deleting the organization removes them. Every change is audited.
 * Its changes take the request's scope first (RequestScope: the workspace, the actor, the metadata)
 * and are audited with it.
 */
export class OrganizationMembershipService {
  constructor(
    private readonly roles: OrganizationRoleService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Makes a live user of the tenant a member of the organization with the named roles; audits
   * `OrganizationMemberAdded`.
   * @throws ApiError 404 `not_found` (unknown or other tenant's organization or user, or a deleted
   *   user), 400 `unknown_organization_role`, 409 `already_member`.
   */
  async add(
    scope: RequestScope, organizationId: string, userId: string, roleNames: string[],
  ): Promise<Member> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    return em.transactional(async (tx) => {
      const user = await this.liveUser(tx, tenantId, userId);
      const roles = await this.join(withEm(scope, tx), organizationId, user.id, roleNames);
      return { user, roles };
    });
  }

  /**
   * Adds the membership inside the caller's transaction (`scope.em`: the admin route, an accepted
   * invitation, a first single sign-on), audits `OrganizationMemberAdded` (with `details.via` when given). An
   * accepted invitation or a connection's default roles (`via`) leave out the roles deleted since
   * instead of failing.
   * @returns the role names the membership holds, sorted.
   * @throws ApiError 404 `not_found` for an unknown organization, 400 `unknown_organization_role`,
   *   409 `already_member`.
   */
  async join(
    scope: RequestScope, organizationId: string, userId: string, roleNames: string[], via?: { inviteId: string } | { ssoConnectionId: string },
  ): Promise<string[]> {
    const { em: tx } = scope;
    const tenantId = scope.tenant.id;
    await this.organization(tx, tenantId, organizationId);
    const roles = await this.roles.resolve(tx, tenantId, roleNames, { dropUnknown: via !== undefined });
    if (!(await insertMembership(tx, tenantId, organizationId, userId, new Date()))) {
      throw ORGANIZATION_ERRORS.alreadyMember();
    }
    await replaceMembershipRoles(tx, tenantId, organizationId, userId, roles.map((role) => role.id));
    const names = roles.map((role) => role.name).sort();
    await this.audit.record(scope, {
      action: 'OrganizationMemberAdded', target: { type: 'organization', id: organizationId },
      details: { userId, roles: names, ...(via ? ('inviteId' in via ? { via: 'invite', inviteId: via.inviteId } : { via: 'sso', connectionId: via.ssoConnectionId }) : {}) },
    });
    return names;
  }

  /**
   * Checks, inside the caller's transaction, that an invitation into an organization may be created:
   * the organization is the tenant's and every role name is in the template.
   * @throws ApiError 404 `not_found`, 400 `unknown_organization_role`.
   */
  async checkInvitation(tx: EntityManager, tenantId: string, organizationId: string, roleNames: string[]): Promise<void> {
    await this.organization(tx, tenantId, organizationId);
    await this.roles.resolve(tx, tenantId, roleNames);
  }

  /**
   * One page of the organization's live members, oldest membership first (ties by user id), with
   * their role names (read for the page's members only), and the cursor of the next page.
   * @param options.limit members on the page (the router keeps it within 1 to MEMBERS_PAGE_MAX_LIMIT).
   * @throws ApiError 404 `not_found`, 400 `invalid_cursor`.
   */
  async list(em: EntityManager, tenantId: string, organizationId: string, options: { limit: number; cursor?: string }): Promise<MemberPage> {
    const after = options.cursor ? decodeCursor(options.cursor) : undefined;
    await this.organization(em, tenantId, organizationId);
    const rows = await findMemberUsersAfter(em, tenantId, organizationId, after, options.limit + 1);
    const page = rows.slice(0, options.limit);
    const roles = await findRoleNamesOfMembers(em, tenantId, organizationId, page.map((row) => row.user.id));
    const last = page.at(-1);
    return {
      items: page.map(({ user }) => ({ user, roles: roles.get(user.id) ?? [] })),
      nextCursor: rows.length > options.limit && last ? encodeCursor(last.createdAtText, last.user.id) : null,
    };
  }

  /**
   * Replaces the roles of a member (an empty list leaves a member without roles); audits
   * `OrganizationMemberRolesChanged` with the roles before and after.
   * @throws ApiError 404 `not_found` (unknown organization, or the user is not a live member), 400 `unknown_organization_role`.
   */
  async setRoles(
    scope: RequestScope, organizationId: string, userId: string, roleNames: string[],
  ): Promise<Member> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    return em.transactional(async (tx) => {
      await this.organization(tx, tenantId, organizationId);
      const user = await this.liveUser(tx, tenantId, userId);
      if (!(await isMember(tx, tenantId, organizationId, userId, true))) throw ORGANIZATION_ERRORS.memberNotFound();
      const before = (await findRoleNamesOfMembers(tx, tenantId, organizationId, [userId])).get(userId) ?? [];
      const roles = await this.roles.resolve(tx, tenantId, roleNames);
      await replaceMembershipRoles(tx, tenantId, organizationId, userId, roles.map((role) => role.id));
      const names = roles.map((role) => role.name).sort();
      await this.audit.record(withEm(scope, tx), {
        action: 'OrganizationMemberRolesChanged', target: { type: 'organization', id: organizationId },
        details: { userId, from: before, to: names },
      });
      return { user, roles: names };
    });
  }

  /**
   * Removes a member (whatever roles they hold: docs/decisions.md "Organizations: no last-owner
   * lock"); audits `OrganizationMemberRemoved` with the roles they held. From then on the person's
   * organization claims leave it out.
   * @throws ApiError 404 `not_found` (unknown organization, or the user is not a live member).
   */
  async remove(scope: RequestScope, organizationId: string, userId: string): Promise<void> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    await em.transactional(async (tx) => {
      await this.organization(tx, tenantId, organizationId);
      if (!isUuid(userId) || !(await isMember(tx, tenantId, organizationId, userId, true))) throw ORGANIZATION_ERRORS.memberNotFound();
      const held = (await findRoleNamesOfMembers(tx, tenantId, organizationId, [userId])).get(userId) ?? [];
      await deleteMembership(tx, tenantId, organizationId, userId);
      await this.audit.record(withEm(scope, tx), {
        action: 'OrganizationMemberRemoved', target: { type: 'organization', id: organizationId },
        details: { userId, roles: held },
      });
    });
  }

  /** The organizations the user belongs to, by name, each with their role names there (GET me/organizations, the `organizations` claim). */
  async organizationsOf(em: EntityManager, tenantId: string, userId: string): Promise<MembershipOfUser[]> {
    return findOrganizationsOfUser(em, tenantId, userId);
  }

  /** @throws ApiError 404 `not_found`. */
  private async organization(em: EntityManager, tenantId: string, organizationId: string): Promise<void> {
    if (!isUuid(organizationId) || !(await findOrganization(em, tenantId, organizationId))) throw ORGANIZATION_ERRORS.organizationNotFound();
  }

  /** @throws ApiError 404 `not_found` for an unknown, deleted or other tenant's user. */
  private async liveUser(em: EntityManager, tenantId: string, userId: string): Promise<User> {
    const user = isUuid(userId) ? await findLiveUserById(em, tenantId, userId) : null;
    if (!user) throw USER_ERRORS.userNotFound();
    return user;
  }
}
