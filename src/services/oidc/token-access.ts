import type { EntityManager } from '@mikro-orm/postgresql';
import type { GrantHolder } from '../../queries/api-permission.js';

/** An API resource an RFC 8707 `resource` value names, with the permission names a token for it may carry. */
export interface IndicatedResource {
  id: string;
  identifier: string;
  /** Permission names: every one of the resource (forIndicator), or those a holder is granted (grantFor). */
  permissions: string[];
}

/**
 * What the provider reads of the workspace's roles and permissions when it issues a token
 * (docs/oidc.md "Roles and permissions"). The access-control feature implements it
 * (ApiResourceService, RoleAssignmentService); the provider depends on this shape only.
 */
export interface AccessControl {
  apiResources: {
    /** The resource `resource` names, with every permission name; undefined when the tenant has none. */
    forIndicator(em: EntityManager, tenantId: string, resource: string): Promise<IndicatedResource | undefined>;
  };
  roleAssignments: {
    /** The resource `resource` names with the permissions the roles of `holder` grant (narrowed to `requested`); undefined when none. */
    grantFor(em: EntityManager, tenantId: string, resource: string, holder: GrantHolder, requested?: readonly string[]): Promise<IndicatedResource | undefined>;
    /** The names of the roles the tenant's user holds (the `roles` claim). */
    roleNamesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<string[]>;
  };
}
