import { EntitySchema } from '@mikro-orm/core';

/** One customer of a tenant: people of the tenant belong to any number of them (docs/organizations.md). */
export interface Organization {
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const OrganizationSchema = new EntitySchema<Organization>({
  name: 'Organization',
  tableName: 'organization',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    name: { type: 'string', length: 200 },
    description: { type: 'string', length: 1000, nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/**
 * A role of the tenant's organization-role template (docs/organizations.md "Roles"): the same roles
 * exist in every organization of the tenant; `permissions` are organization permission names
 * (`[A-Za-z0-9:._-]{1,64}`), not API resources.
 */
export interface OrganizationRole {
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  permissions: string[];
  createdAt: Date;
  updatedAt: Date;
}

export const OrganizationRoleSchema = new EntitySchema<OrganizationRole>({
  name: 'OrganizationRole',
  tableName: 'organization_role',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    name: { type: 'string', length: 64 },
    description: { type: 'string', length: 1000, nullable: true },
    permissions: { type: 'json' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/** A user's membership of an organization (one row per person and organization). */
export interface OrganizationMembership {
  organizationId: string;
  userId: string;
  tenantId: string;
  createdAt: Date;
}

export const OrganizationMembershipSchema = new EntitySchema<OrganizationMembership>({
  name: 'OrganizationMembership',
  tableName: 'organization_membership',
  properties: {
    organizationId: { type: 'uuid', primary: true },
    userId: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    createdAt: { type: 'Date' },
  },
});

/** One organization role held by one membership. */
export interface OrganizationMembershipRole {
  organizationId: string;
  userId: string;
  roleId: string;
  tenantId: string;
}

export const OrganizationMembershipRoleSchema = new EntitySchema<OrganizationMembershipRole>({
  name: 'OrganizationMembershipRole',
  tableName: 'organization_membership_role',
  properties: {
    organizationId: { type: 'uuid', primary: true },
    userId: { type: 'uuid', primary: true },
    roleId: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
  },
});
