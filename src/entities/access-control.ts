import { EntitySchema } from '@mikro-orm/core';

/**
 * An API of the tenant (docs/oidc.md "Roles and permissions"): its `identifier` is the OAuth `resource` (RFC 8707)
 * and the `aud` of its access tokens (RFC 9068).
 */
export interface ApiResource {
  id: string;
  tenantId: string;
  name: string;
  identifier: string;
  /** Registered from a redirect-URI origin by the migration: any URL of this origin names it. */
  legacyOrigin: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const ApiResourceSchema = new EntitySchema<ApiResource>({
  name: 'ApiResource',
  tableName: 'api_resource',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    name: { type: 'string', length: 100 },
    identifier: { type: 'string', length: 512 },
    legacyOrigin: { type: 'boolean' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/** A permission (an OAuth scope value such as `read:invoices`) of one API resource. */
export interface ApiPermission {
  id: string;
  tenantId: string;
  resourceId: string;
  name: string;
  description: string;
  createdAt: Date;
}

export const ApiPermissionSchema = new EntitySchema<ApiPermission>({
  name: 'ApiPermission',
  tableName: 'api_permission',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    resourceId: { type: 'uuid' },
    name: { type: 'string', length: 64 },
    description: { type: 'string', length: 500 },
    createdAt: { type: 'Date' },
  },
});

/** A role of the tenant's own (not the built-in Admin/Member): a named bundle of permissions. */
export interface AccessRole {
  id: string;
  tenantId: string;
  name: string;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

export const AccessRoleSchema = new EntitySchema<AccessRole>({
  name: 'AccessRole',
  tableName: 'access_role',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    name: { type: 'string', length: 100 },
    description: { type: 'string', length: 500 },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/** One permission a role bundles. */
export interface AccessRolePermission {
  tenantId: string;
  roleId: string;
  permissionId: string;
}

export const AccessRolePermissionSchema = new EntitySchema<AccessRolePermission>({
  name: 'AccessRolePermission',
  tableName: 'access_role_permission',
  properties: {
    tenantId: { type: 'uuid' },
    roleId: { type: 'uuid', primary: true },
    permissionId: { type: 'uuid', primary: true },
  },
});

/** A role a user holds. */
export interface UserAccessRole {
  tenantId: string;
  userId: string;
  roleId: string;
  createdAt: Date;
}

export const UserAccessRoleSchema = new EntitySchema<UserAccessRole>({
  name: 'UserAccessRole',
  tableName: 'user_access_role',
  properties: {
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid', primary: true },
    roleId: { type: 'uuid', primary: true },
    createdAt: { type: 'Date' },
  },
});

/** A role an `m2m` application holds. */
export interface ApplicationAccessRole {
  tenantId: string;
  applicationId: string;
  roleId: string;
  createdAt: Date;
}

export const ApplicationAccessRoleSchema = new EntitySchema<ApplicationAccessRole>({
  name: 'ApplicationAccessRole',
  tableName: 'application_access_role',
  properties: {
    tenantId: { type: 'uuid' },
    applicationId: { type: 'uuid', primary: true },
    roleId: { type: 'uuid', primary: true },
    createdAt: { type: 'Date' },
  },
});
