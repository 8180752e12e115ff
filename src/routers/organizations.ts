import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { rejectEmptyQueryValues } from '../middleware/empty-query-values.js';
import { MEMBERS_PAGE_DEFAULT_LIMIT, MEMBERS_PAGE_MAX_LIMIT, type Member } from '../services/organizations/organization-membership-service.js';
import { ORGANIZATIONS_PAGE_DEFAULT_LIMIT, ORGANIZATIONS_PAGE_MAX_LIMIT } from '../services/organizations/organization-service.js';
import type { Tenant } from '../entities/tenant.js';
import { router } from '../trpc.js';
import { organizationOutput, organizationRoleName, toOrganizationOutput } from './organization-schemas.js';
import { displayName, OK, okOutput, toUserOutput, userOutput } from './schemas.js';

const tags = ['organizations'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or organization', 429: 'Rate limited' };
const changeErrors = { ...adminErrors, 403: 'Not an admin, or a test API key (`live_key_required`)' };

const idInput = z.object({ id: z.uuid() });
const description = z.string().max(1000).nullable();
const roleNames = z.array(organizationRoleName).max(50).meta({ description: 'Names of organization roles of the tenant' });

/** A member of an organization: the user as `GET users` shows them and the names of their organization roles there. */
export const memberOutput = z
  .object({ user: userOutput, roles: z.array(z.string()) })
  .meta({ id: 'OrganizationMember' });

function toMemberOutput(member: Member, tenant: Tenant): z.infer<typeof memberOutput> {
  return { user: toUserOutput(member.user, tenant), roles: member.roles };
}

/** Every `/v1/{tenantSlug}/organizations*` procedure: the tenant's own customers and their members. */
export const organizationsRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/organizations', protect: true, tags, summary: 'List the organizations, oldest first, a page at a time',
        description: `\`limit\` 1 to ${ORGANIZATIONS_PAGE_MAX_LIMIT}, default ${ORGANIZATIONS_PAGE_DEFAULT_LIMIT}; pass \`nextCursor\` as \`cursor\` for the next page (null on the last). ` +
          '`search` matches a part of the name, case-insensitive. Each item carries `memberCount`, its live members.',
        errorResponses: { ...adminErrors, 400: 'Invalid query or cursor (`invalid_cursor`)' },
      },
      errorReasons: { 400: ['invalid_cursor'] },
    })
    .input(
      z.object({
        search: z.string().min(1).max(200).optional().meta({ description: 'A part of the name, case-insensitive' }),
        limit: z.coerce.number().int().min(1).max(ORGANIZATIONS_PAGE_MAX_LIMIT).optional(),
        cursor: z.string().min(1).max(512).optional(),
      }),
    )
    .output(z.object({
      items: z.array(organizationOutput.extend({ memberCount: z.number().int().meta({ description: 'Live members (deleted users not counted)' }) })),
      nextCursor: z.string().nullable(),
    }))
    .query(async ({ ctx, input }) => {
      rejectEmptyQueryValues(ctx.req, ['search', 'cursor', 'limit']);
      const page = await ctx.services.organizations.list(ctx.em, ctx.tenant.id, {
        search: input.search, cursor: input.cursor, limit: input.limit ?? ORGANIZATIONS_PAGE_DEFAULT_LIMIT,
      });
      return { items: page.items.map((item) => ({ ...toOrganizationOutput(item), memberCount: item.memberCount })), nextCursor: page.nextCursor };
    }),

  get: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/organizations/{id}', protect: true, tags, summary: 'Read one organization', errorResponses: { ...adminErrors, 400: 'id is not a UUID' } },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(organizationOutput)
    .query(async ({ ctx, input }) => toOrganizationOutput(await ctx.services.organizations.get(ctx.em, ctx.tenant.id, input.id))),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/organizations', protect: true, tags, summary: 'Create an organization (a customer of the tenant)',
        errorResponses: { ...changeErrors, 400: 'Invalid input' },
      },
    })
    .input(z.object({ name: displayName(200), description: description.optional() }))
    .output(z.object({ organization: organizationOutput }))
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, ...fields } = input;
      return { organization: toOrganizationOutput(await ctx.services.organizations.create(ctx.scope, fields)) };
    }),

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/organizations/{id}', protect: true, tags, summary: 'Rename an organization or change its description',
        errorResponses: { ...changeErrors, 400: 'Invalid input' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput.extend({ name: displayName(200).optional(), description: description.optional() }))
    .output(organizationOutput)
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, id, ...changes } = input;
      return toOrganizationOutput(await ctx.services.organizations.update(ctx.scope, id, changes));
    }),

  delete: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/organizations/{id}', protect: true, tags,
        summary: 'Delete an organization: its memberships and open invites go with it',
        errorResponses: { ...changeErrors, 400: 'id is not a UUID' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.organizations.delete(ctx.scope, input.id);
      return OK;
    }),

  listMembers: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/organizations/{id}/members', protect: true, tags,
        summary: 'List the members of an organization with their organization roles, oldest membership first, a page at a time',
        description: `\`limit\` 1 to ${MEMBERS_PAGE_MAX_LIMIT}, default ${MEMBERS_PAGE_DEFAULT_LIMIT}; pass \`nextCursor\` as \`cursor\` for the next page (null on the last).`,
        errorResponses: { ...adminErrors, 400: 'id is not a UUID, or an invalid query or cursor (`invalid_cursor`)' },
      },
      errorReasons: { 400: ['invalid_cursor'], 404: ['not_found'] },
    })
    .input(idInput.extend({
      limit: z.coerce.number().int().min(1).max(MEMBERS_PAGE_MAX_LIMIT).optional(),
      cursor: z.string().min(1).max(512).optional(),
    }))
    .output(z.object({ items: z.array(memberOutput), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      rejectEmptyQueryValues(ctx.req, ['cursor', 'limit']);
      const page = await ctx.services.organizationMembers.list(ctx.em, ctx.tenant.id, input.id, { limit: input.limit ?? MEMBERS_PAGE_DEFAULT_LIMIT, cursor: input.cursor });
      return { items: page.items.map((member) => toMemberOutput(member, ctx.tenant)), nextCursor: page.nextCursor };
    }),

  addMember: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/organizations/{id}/members', protect: true, tags,
        summary: 'Add a user of the tenant to an organization, with organization roles',
        errorResponses: {
          ...changeErrors, 400: 'Invalid input, or an unknown organization role (`unknown_organization_role`)',
          404: 'Unknown tenant, organization or user', 409: 'The user is a member already (`already_member`)',
        },
      },
      errorReasons: { 400: ['unknown_organization_role'], 404: ['not_found'], 409: ['already_member'] },
    })
    .input(idInput.extend({ userId: z.uuid(), roles: roleNames.optional() }))
    .output(z.object({ member: memberOutput }))
    .mutation(async ({ ctx, input }) => {
      const member = await ctx.services.organizationMembers.add(ctx.scope, input.id, input.userId, input.roles ?? []);
      return { member: toMemberOutput(member, ctx.tenant) };
    }),

  updateMember: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/organizations/{id}/members/{userId}', protect: true, tags,
        summary: 'Replace the organization roles of a member',
        errorResponses: {
          ...changeErrors, 400: 'Invalid input, or an unknown organization role (`unknown_organization_role`)',
          404: 'Unknown tenant or organization, or the user is not a member',
        },
      },
      errorReasons: { 400: ['unknown_organization_role'], 404: ['not_found'] },
    })
    .input(idInput.extend({ userId: z.uuid(), roles: roleNames }))
    .output(z.object({ member: memberOutput }))
    .mutation(async ({ ctx, input }) => {
      const member = await ctx.services.organizationMembers.setRoles(ctx.scope, input.id, input.userId, input.roles);
      return { member: toMemberOutput(member, ctx.tenant) };
    }),

  removeMember: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/organizations/{id}/members/{userId}', protect: true, tags,
        summary: 'Remove a member from an organization',
        errorResponses: { ...changeErrors, 400: 'id or userId is not a UUID', 404: 'Unknown tenant or organization, or the user is not a member' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput.extend({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.organizationMembers.remove(ctx.scope, input.id, input.userId);
      return OK;
    }),
});
