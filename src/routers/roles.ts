import { z } from 'zod';
import { adminProcedure, securityAdminProcedure } from '../middleware/auth.js';
import type { RoleView } from '../services/access-control/role-service.js';
import { router } from '../trpc.js';
import { permissionName } from './api-resources.js';
import { displayName, OK, okOutput, timestampOutput } from './schemas.js';

const tags = ['access control'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or role', 429: 'Rate limited' };
const changeErrors = { ...adminErrors, 403: 'Not an admin, or a test API key (`live_key_required`)' };

const rolePermission = z.object({
  resource: z.string().min(1).max(512).meta({ description: 'An API resource\'s identifier' }),
  permission: permissionName,
});

/** A role of the tenant's own (docs/oidc.md "Roles and permissions"); not the built-in Admin/Member. */
export const roleOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    permissions: z.array(z.object({ resource: z.string(), permission: z.string() })),
    createdAt: timestampOutput,
  })
  .meta({ id: 'Role' });

/** The answer's shape of a role. */
export function toRoleOutput(role: RoleView): z.infer<typeof roleOutput> {
  return { ...role, createdAt: role.createdAt.toISOString() };
}

/** The body of `PUT …/roles` of a user or an application: the whole set of role ids. */
export const roleIdsInput = z.array(z.uuid()).max(100);

const idInput = z.object({ id: z.uuid() });
const description = z.string().trim().max(500);

/** Every `/v1/{tenantSlug}/roles*` procedure: the tenant's own roles. */
export const rolesRouter = router({
  list: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/roles', protect: true, tags, summary: 'List the roles with their permissions, oldest first', errorResponses: adminErrors },
    })
    .output(z.object({ items: z.array(roleOutput) }))
    .query(async ({ ctx }) => ({ items: (await ctx.services.roles.list(ctx.em, ctx.tenant.id)).map(toRoleOutput) })),

  get: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/roles/{id}', protect: true, tags, summary: 'Read one role', errorResponses: { ...adminErrors, 400: 'id is not a UUID' } },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(z.object({ role: roleOutput }))
    .query(async ({ ctx, input }) => ({ role: toRoleOutput(await ctx.services.roles.get(ctx.em, ctx.tenant.id, input.id)) })),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/roles', protect: true, tags,
        summary: 'Create a role: a named set of permissions of your API resources',
        errorResponses: { ...changeErrors, 400: 'Invalid input (`unknown_resource`, `unknown_permission`)', 409: 'Name taken (`role_name_taken`)' },
      },
      errorReasons: { 400: ['unknown_resource', 'unknown_permission'], 409: ['role_name_taken'] },
    })
    .input(z.object({ name: displayName(100), description: description.optional(), permissions: z.array(rolePermission).max(1000) }))
    .output(z.object({ role: roleOutput }))
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, ...fields } = input;
      return { role: toRoleOutput(await ctx.services.roles.create(ctx.em, ctx.tenant, fields, ctx.actor, ctx.meta)) };
    }),

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/roles/{id}', protect: true, tags,
        summary: 'Rename a role, change its description, or replace its permissions; holders\' next tokens carry the change',
        errorResponses: { ...changeErrors, 400: 'Invalid input (`unknown_resource`, `unknown_permission`)', 409: 'Name taken (`role_name_taken`)' },
      },
      errorReasons: { 400: ['unknown_resource', 'unknown_permission'], 404: ['not_found'], 409: ['role_name_taken'] },
    })
    .input(idInput.extend({ name: displayName(100).optional(), description: description.optional(), permissions: z.array(rolePermission).max(1000).optional() }))
    .output(z.object({ role: roleOutput }))
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, id, ...changes } = input;
      return { role: toRoleOutput(await ctx.services.roles.update(ctx.em, ctx.tenant, id, changes, ctx.actor, ctx.meta)) };
    }),

  delete: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/roles/{id}', protect: true, tags,
        summary: 'Delete a role: every user and application holding it loses it',
        errorResponses: { ...changeErrors, 400: 'id is not a UUID' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.roles.delete(ctx.em, ctx.tenant, input.id, ctx.actor, ctx.meta);
      return OK;
    }),
});
