import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import type { Tenant } from '../entities/tenant.js';
import { rejectEmptyQueryValues } from '../middleware/empty-query-values.js';
import { ROLE_MEMBERS_PAGE_DEFAULT_LIMIT, ROLE_MEMBERS_PAGE_MAX_LIMIT, type RoleMember, type RoleView } from '../services/access-control/role-service.js';
import { router } from '../trpc.js';
import { permissionName } from './api-resources.js';
import { applicationOutput, toApplicationOutput } from './application-schemas.js';
import { displayName, OK, okOutput, timestampOutput, toUserOutput, userOutput } from './schemas.js';

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

/** One holder of a role (docs/authorization.md "Members of a role"): a user as `GET users` shows them, or an application as `GET applications` does. */
export const roleMemberOutput = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('user'), user: userOutput }),
    z.object({ type: z.literal('application'), application: applicationOutput }),
  ])
  .meta({ id: 'RoleMember' });

function toRoleMemberOutput(member: RoleMember, tenant: Tenant): z.infer<typeof roleMemberOutput> {
  return member.type === 'user'
    ? { type: 'user', user: toUserOutput(member.user, tenant) }
    : { type: 'application', application: toApplicationOutput(member.application) };
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

  members: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/roles/{id}/members', protect: true, tags,
        summary: 'List who holds a role: its live users and its applications, a page at a time',
        description:
          'Users (soft-deleted ones left out) and `m2m` applications holding the role, ordered by when the holder\'s roles were last set, then kind, then id. ' +
          `\`limit\` 1 to ${ROLE_MEMBERS_PAGE_MAX_LIMIT}, default ${ROLE_MEMBERS_PAGE_DEFAULT_LIMIT}; pass \`nextCursor\` as \`cursor\` for the next page (null on the last).`,
        errorResponses: { ...adminErrors, 400: 'id is not a UUID, or an invalid query or cursor (`invalid_cursor`)' },
      },
      errorReasons: { 400: ['invalid_cursor'], 404: ['not_found'] },
    })
    .input(idInput.extend({
      limit: z.coerce.number().int().min(1).max(ROLE_MEMBERS_PAGE_MAX_LIMIT).optional(),
      cursor: z.string().min(1).max(512).optional(),
    }))
    .output(z.object({ items: z.array(roleMemberOutput), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      rejectEmptyQueryValues(ctx.req, ['cursor', 'limit']);
      const page = await ctx.services.roles.members(ctx.em, ctx.tenant.id, input.id, { limit: input.limit ?? ROLE_MEMBERS_PAGE_DEFAULT_LIMIT, cursor: input.cursor });
      return { items: page.items.map((member) => toRoleMemberOutput(member, ctx.tenant)), nextCursor: page.nextCursor };
    }),

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
      return { role: toRoleOutput(await ctx.services.roles.create(ctx.scope, fields)) };
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
      return { role: toRoleOutput(await ctx.services.roles.update(ctx.scope, id, changes)) };
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
      await ctx.services.roles.delete(ctx.scope, input.id);
      return OK;
    }),
});
