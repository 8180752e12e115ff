import { z } from 'zod';
import type { Organization, OrganizationRole } from '../entities/organization.js';
import { timestampOutput } from './schemas.js';

/** An organization permission name (docs/organizations.md "Roles"): 1 to 64 of `[A-Za-z0-9:._-]`, e.g. `read:invoices`. */
export const organizationPermissionName = z
  .string()
  .regex(/^[A-Za-z0-9:._-]{1,64}$/, 'must be 1 to 64 of A-Z a-z 0-9 : . _ -')
  .meta({ description: 'An organization permission name, 1 to 64 of `[A-Za-z0-9:._-]`, e.g. `read:invoices`' });

/** The name of an organization role as given on memberships and invites. */
export const organizationRoleName = z.string().min(1).max(64);

/** An organization as the API shows it (docs/organizations.md). */
export const organizationOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    createdAt: timestampOutput,
  })
  .meta({ id: 'Organization' });

/** Shapes an organization as the `Organization` schema. */
export function toOrganizationOutput(organization: Organization): z.infer<typeof organizationOutput> {
  return { id: organization.id, name: organization.name, description: organization.description, createdAt: organization.createdAt.toISOString() };
}

/** An organization role as the API shows it (docs/organizations.md "Roles"). */
export const organizationRoleOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    permissions: z.array(z.string()),
    createdAt: timestampOutput,
  })
  .meta({ id: 'OrganizationRole' });

/** Shapes an organization role as the `OrganizationRole` schema. */
export function toOrganizationRoleOutput(role: OrganizationRole): z.infer<typeof organizationRoleOutput> {
  return { id: role.id, name: role.name, description: role.description, permissions: role.permissions, createdAt: role.createdAt.toISOString() };
}

/** One organization of the signed-in person (GET me/organizations, the `organizations` claim). */
export const myOrganizationOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    roles: z.array(z.string()).meta({ description: 'Names of the organization roles the person holds there' }),
  })
  .meta({ id: 'MyOrganization' });
