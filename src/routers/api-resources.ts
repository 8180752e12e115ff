import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { PERMISSION_NAME, type ApiResourceView } from '../services/access-control/api-resource-service.js';
import { router } from '../trpc.js';
import { displayName, OK, okOutput, timestampOutput } from './schemas.js';

const tags = ['access control'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or API resource', 429: 'Rate limited' };
const changeErrors = { ...adminErrors, 403: 'Not an admin, or a test API key (`live_key_required`)' };

/** A permission name: an OAuth scope token such as `read:invoices`. */
export const permissionName = z.string().regex(PERMISSION_NAME, 'must be 1 to 64 of A-Z a-z 0-9 : . _ -').meta({ example: 'read:invoices' });

const permissionInput = z.object({ name: permissionName, description: z.string().trim().max(500).optional() });
const permissionsInput = z.array(permissionInput).max(200);

/** An API resource as the API shows it (docs/oidc.md "Roles and permissions"). */
export const apiResourceOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    identifier: z.string().meta({ description: 'The OAuth `resource` (RFC 8707) and the `aud` of its access tokens' }),
    permissions: z.array(z.object({ name: z.string(), description: z.string() })),
    createdAt: timestampOutput,
  })
  .meta({ id: 'ApiResource' });

function toOutput(resource: ApiResourceView): z.infer<typeof apiResourceOutput> {
  return { ...resource, createdAt: resource.createdAt.toISOString() };
}

const idInput = z.object({ id: z.uuid() });

/** Every `/v1/{tenantSlug}/api-resources*` procedure: the tenant's own APIs and their permissions. */
export const apiResourcesRouter = router({
  list: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/api-resources', protect: true, tags, summary: 'List the API resources with their permissions, oldest first', errorResponses: adminErrors },
    })
    .output(z.object({ items: z.array(apiResourceOutput) }))
    .query(async ({ ctx }) => ({ items: (await ctx.services.apiResources.list(ctx.em, ctx.tenant.id)).map(toOutput) })),

  get: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/api-resources/{id}', protect: true, tags, summary: 'Read one API resource', errorResponses: { ...adminErrors, 400: 'id is not a UUID' } },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(z.object({ apiResource: apiResourceOutput }))
    .query(async ({ ctx, input }) => ({ apiResource: toOutput(await ctx.services.apiResources.get(ctx.em, ctx.tenant.id, input.id)) })),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/api-resources', protect: true, tags,
        summary: 'Register an API resource (one of your APIs) with its permissions',
        description:
          '`identifier` is an absolute `https://` URL (or `http://` on a loopback host), unique in the workspace: applications ask for it as ' +
          '`resource` (RFC 8707) and it is the `aud` of its access tokens (RFC 9068). A permission name is 1 to 64 of `A-Z a-z 0-9 : . _ -`.',
        errorResponses: {
          ...changeErrors, 400: 'Invalid input (`invalid_resource_identifier`, `duplicate_permission`)', 409: 'Identifier taken (`resource_identifier_taken`)',
        },
      },
      errorReasons: { 400: ['invalid_resource_identifier', 'duplicate_permission'], 409: ['resource_identifier_taken'] },
    })
    .input(z.object({ name: displayName(100), identifier: z.string().min(1).max(512), permissions: permissionsInput.optional() }))
    .output(z.object({ apiResource: apiResourceOutput }))
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, ...fields } = input;
      return { apiResource: toOutput(await ctx.services.apiResources.create(ctx.scope, fields)) };
    }),

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/api-resources/{id}', protect: true, tags,
        summary: 'Rename an API resource or replace its permissions (a permission left out leaves every role)',
        errorResponses: { ...changeErrors, 400: 'Invalid input (`duplicate_permission`)' },
      },
      errorReasons: { 400: ['duplicate_permission'], 404: ['not_found'] },
    })
    .input(idInput.extend({ name: displayName(100).optional(), permissions: permissionsInput.optional() }))
    .output(z.object({ apiResource: apiResourceOutput }))
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, id, ...changes } = input;
      return { apiResource: toOutput(await ctx.services.apiResources.update(ctx.scope, id, changes)) };
    }),

  delete: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/api-resources/{id}', protect: true, tags,
        summary: 'Delete an API resource: its permissions leave every role; it is no longer a valid `resource`',
        errorResponses: { ...changeErrors, 400: 'id is not a UUID' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.apiResources.delete(ctx.scope, input.id);
      return OK;
    }),
});
