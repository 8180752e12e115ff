import type { EntityManager } from '@mikro-orm/postgresql';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import { findApplication } from '../../queries/oidc-application.js';
import { findLiveUserById, lockLiveUser } from '../../queries/user.js';
import { ACCESS_CONTROL_ERRORS } from '../../errors/access-control.js';
import { findPermissionsOfRoles } from '../../queries/access-role-permission.js';
import { findRolesByIds, type AccessRoleRow } from '../../queries/access-role.js';
import { findIndicatedResourceGrant, type GrantHolder } from '../../queries/api-permission.js';
import { indicatorOrigin, type IndicatedResource } from './api-resource-service.js';
import { findRolesOfApplication, replaceApplicationRoles } from '../../queries/application-access-role.js';
import { toRoleViews, type RoleView } from './role-service.js';
import { findRolesOfUser, replaceUserRoles } from '../../queries/user-access-role.js';
import { USER_ERRORS } from '../../errors/user.js';
import { OIDC_ERRORS } from '../../errors/oidc.js';

/**
 * Which of the tenant's roles its users and `m2m` applications hold (docs/oidc.md "Roles and permissions"
 * "Assignment"), and what that grants when a token is issued. A set is replaced whole, in the workspace
 * of the request's scope (RequestScope); a change is audited with the scope's actor and metadata
 * (`UserRolesChanged`, `ApplicationRolesChanged`) and applies to the next token issued.
 */
export class RoleAssignmentService {
  constructor(private readonly audit: AuditService) {}

  /** The roles of the tenant's live user. @throws ApiError 404 `not_found`. */
  async rolesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<RoleView[]> {
    if (!(await findLiveUserById(em, tenantId, userId))) throw USER_ERRORS.userNotFound();
    return this.views(em, tenantId, await findRolesOfUser(em, tenantId, userId));
  }

  /**
   * Replaces the roles of the tenant's live user.
   * @throws ApiError 404 `not_found` (user), 400 `unknown_role` (`details.roleId`).
   */
  async setRolesOfUser(scope: RequestScope, userId: string, roleIds: string[]): Promise<RoleView[]> {
    const { em, tenant } = scope;
    return em.transactional(async (tx) => {
      if (!(await lockLiveUser(tx, tenant.id, userId))) throw USER_ERRORS.userNotFound();
      const roles = await this.checkedRoles(tx, tenant.id, roleIds);
      const before = await findRolesOfUser(tx, tenant.id, userId);
      await replaceUserRoles(tx, tenant.id, userId, roles.map((r) => r.id), new Date());
      await this.audit.record(withEm(scope, tx), {
        action: 'UserRolesChanged', target: { type: 'user', id: userId }, details: changeDetails(before, roles),
      });
      return this.views(tx, tenant.id, roles);
    });
  }

  /** The roles of the tenant's application. @throws ApiError 404 `not_found`. */
  async rolesOfApplication(em: EntityManager, tenantId: string, applicationId: string): Promise<RoleView[]> {
    if (!(await findApplication(em, tenantId, applicationId))) throw OIDC_ERRORS.applicationNotFound();
    return this.views(em, tenantId, await findRolesOfApplication(em, tenantId, applicationId));
  }

  /**
   * Replaces the roles of the tenant's `m2m` application.
   * @throws ApiError 404 `not_found`, 400 `application_not_m2m`, `unknown_role` (`details.roleId`).
   */
  async setRolesOfApplication(scope: RequestScope, applicationId: string, roleIds: string[]): Promise<RoleView[]> {
    const { em, tenant } = scope;
    return em.transactional(async (tx) => {
      const application = await findApplication(tx, tenant.id, applicationId, true);
      if (!application) throw OIDC_ERRORS.applicationNotFound();
      if (application.type !== 'm2m') throw ACCESS_CONTROL_ERRORS.notM2m();
      const roles = await this.checkedRoles(tx, tenant.id, roleIds);
      const before = await findRolesOfApplication(tx, tenant.id, applicationId);
      await replaceApplicationRoles(tx, tenant.id, applicationId, roles.map((r) => r.id), new Date());
      await this.audit.record(withEm(scope, tx), {
        action: 'ApplicationRolesChanged', target: { type: 'application', id: applicationId },
        details: { clientId: application.clientId, ...changeDetails(before, roles) },
      });
      return this.views(tx, tenant.id, roles);
    });
  }

  /** The names of the roles the tenant's user holds (the `roles` claim), by name. */
  async roleNamesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<string[]> {
    return (await findRolesOfUser(em, tenantId, userId)).map((r) => r.name);
  }

  /**
   * What a token for an RFC 8707 `resource` value may carry (docs/oidc.md "Roles and permissions"):
   * the tenant's API resource it names (as ApiResourceService.forIndicator) and the names of its
   * permissions that the roles of `holder` (a user by id, an application by client id) grant,
   * narrowed to `requested` when given. One statement (findIndicatedResourceGrant): the resource's
   * other permissions are not read.
   * @returns undefined when the tenant has no such resource; an unknown client holds no permission.
   */
  async grantFor(em: EntityManager, tenantId: string, resource: string, holder: GrantHolder, requested?: readonly string[]): Promise<IndicatedResource | undefined> {
    const found = await findIndicatedResourceGrant(em, tenantId, resource, indicatorOrigin(resource), holder, requested);
    return found && { id: found.resourceId, identifier: found.identifier, permissions: found.permissions };
  }

  private async checkedRoles(em: EntityManager, tenantId: string, roleIds: string[]): Promise<AccessRoleRow[]> {
    const wanted = [...new Set(roleIds)];
    const roles = await findRolesByIds(em, tenantId, wanted);
    const found = new Set(roles.map((r) => r.id));
    const missing = wanted.find((id) => !found.has(id));
    if (missing) throw ACCESS_CONTROL_ERRORS.unknownRole({ roleId: missing });
    return roles;
  }

  private async views(em: EntityManager, tenantId: string, roles: AccessRoleRow[]): Promise<RoleView[]> {
    return toRoleViews(roles, await findPermissionsOfRoles(em, tenantId, roles.map((r) => r.id)));
  }
}

function changeDetails(before: AccessRoleRow[], after: AccessRoleRow[]): Record<string, unknown> {
  const had = new Set(before.map((r) => r.id));
  const has = new Set(after.map((r) => r.id));
  return {
    roles: after.map((r) => r.name),
    added: after.filter((r) => !had.has(r.id)).map((r) => r.name),
    removed: before.filter((r) => !has.has(r.id)).map((r) => r.name),
  };
}
