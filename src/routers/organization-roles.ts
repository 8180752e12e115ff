import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { router } from '../trpc.js';
import { organizationPermissionName, organizationRoleOutput, toOrganizationRoleOutput } from './organization-schemas.js';
import { displayName, OK, okOutput } from './schemas.js';

const tags = ['organizations'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or organization role', 429: 'Rate limited' };
const changeErrors = { ...adminErrors, 403: 'Not an admin, or a test API key (`live_key_required`)' };

const idInput = z.object({ id: z.uuid() });
const roleName = displayName(64);
const description = z.string().max(1000).nullable();
const permissions = z.array(organizationPermissionName).max(100);

/** Every `/v1/{tenantSlug}/organization-roles*` procedure: the tenant's one template of organization roles. */
export const organizationRolesRouter = router({
  list: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/organization-roles', protect: true, tags, summary: 'List the organization roles, by name', errorResponses: adminErrors },
    })
    .output(z.object({ items: z.array(organizationRoleOutput) }))
    .query(async ({ ctx }) => ({ items: (await ctx.services.organizationRoles.list(ctx.em, ctx.tenant.id)).map(toOrganizationRoleOutput) })),

  get: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/organization-roles/{id}', protect: true, tags, summary: 'Read one organization role', errorResponses: { ...adminErrors, 400: 'id is not a UUID' } },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(organizationRoleOutput)
    .query(async ({ ctx, input }) => toOrganizationRoleOutput(await ctx.services.organizationRoles.get(ctx.em, ctx.tenant.id, input.id))),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/organization-roles', protect: true, tags,
        summary: 'Create an organization role: the same role exists in every organization of the tenant',
        description: '`permissions` are organization permission names (not API resources); a member holding the role holds them in that organization.',
        errorResponses: { ...changeErrors, 400: 'Invalid input', 409: 'Another organization role has this name (`organization_role_name_taken`)' },
      },
      errorReasons: { 409: ['organization_role_name_taken'] },
    })
    .input(z.object({ name: roleName, description: description.optional(), permissions }))
    .output(z.object({ organizationRole: organizationRoleOutput }))
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, ...fields } = input;
      return { organizationRole: toOrganizationRoleOutput(await ctx.services.organizationRoles.create(ctx.scope, fields)) };
    }),

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/organization-roles/{id}', protect: true, tags,
        summary: 'Rename an organization role, change its description or replace its permissions (members holding it hold the new ones at once)',
        errorResponses: { ...changeErrors, 400: 'Invalid input', 409: 'Another organization role has this name (`organization_role_name_taken`)' },
      },
      errorReasons: { 404: ['not_found'], 409: ['organization_role_name_taken'] },
    })
    .input(idInput.extend({ name: roleName.optional(), description: description.optional(), permissions: permissions.optional() }))
    .output(organizationRoleOutput)
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, id, ...changes } = input;
      return toOrganizationRoleOutput(await ctx.services.organizationRoles.update(ctx.scope, id, changes));
    }),

  delete: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/organization-roles/{id}', protect: true, tags,
        summary: 'Delete an organization role: every member holding it loses it',
        errorResponses: { ...changeErrors, 400: 'id is not a UUID' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.organizationRoles.delete(ctx.scope, input.id);
      return OK;
    }),
});
