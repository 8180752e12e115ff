import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { APPLICATION_TYPES } from '../services/oidc/application-service.js';
import { router } from '../trpc.js';
import { applicationOutput, toApplicationOutput } from './application-schemas.js';
import { roleIdsInput, roleOutput, toRoleOutput } from './roles.js';
import { displayName, OK, okOutput } from './schemas.js';

const tags = ['applications'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or application', 429: 'Rate limited' };

const redirectUri = z.string().min(1).max(2000);
const uriList = z.array(redirectUri).max(20);

const clientSecretOutput = z
  .string()
  .meta({ description: 'The client secret (256 random bits), shown only in this answer; `web` and `m2m` only' });

const idInput = z.object({ id: z.uuid() });

/** Every `/v1/{tenantSlug}/applications*` procedure: the clients of the tenant's OpenID Provider. */
export const applicationsRouter = router({
  list: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/applications', protect: true, tags, summary: 'List the applications, oldest first', errorResponses: adminErrors },
    })
    .output(z.object({ items: z.array(applicationOutput) }))
    .query(async ({ ctx }) => ({ items: (await ctx.services.applications.list(ctx.em, ctx.tenant.id)).map(toApplicationOutput) })),

  get: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/applications/{id}', protect: true, tags, summary: 'Read one application', errorResponses: { ...adminErrors, 400: 'id is not a UUID' } },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(applicationOutput)
    .query(async ({ ctx, input }) => toApplicationOutput(await ctx.services.applications.get(ctx.em, ctx.tenant.id, input.id))),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/applications', protect: true, tags,
        summary: 'Register an application (an OpenID Connect client); a `web` or `m2m` one gets its client secret in this answer only',
        description:
          '`web`: confidential, authorization code (+ refresh). `spa`, `native`: public, authorization code with PKCE S256, no secret. ' +
          '`m2m`: confidential, `client_credentials` only. A redirect URI is matched exactly: `https://`, `http://` on a loopback host, or ' +
          '(native only) a private-use scheme such as `com.example.app:/callback`.',
        errorResponses: { ...adminErrors, 400: 'Invalid input or redirect URI (`invalid_redirect_uri`)', 403: 'Not an admin, or a test API key (`live_key_required`)' },
      },
      errorReasons: { 400: ['invalid_redirect_uri'] },
    })
    .input(
      z.object({
        name: displayName(100),
        type: z.enum(APPLICATION_TYPES),
        redirectUris: uriList.optional(),
        postLogoutRedirectUris: uriList.optional(),
      }),
    )
    .output(z.object({ application: applicationOutput, clientSecret: clientSecretOutput.optional() }))
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, ...fields } = input;
      const created = await ctx.services.applications.create(ctx.scope, fields);
      return { application: toApplicationOutput(created.application), ...(created.clientSecret ? { clientSecret: created.clientSecret } : {}) };
    }),

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/applications/{id}', protect: true, tags, summary: 'Rename an application or replace its redirect URIs',
        errorResponses: { ...adminErrors, 400: 'Invalid input or redirect URI (`invalid_redirect_uri`)' },
      },
      errorReasons: { 400: ['invalid_redirect_uri'], 404: ['not_found'] },
    })
    .input(idInput.extend({ name: displayName(100).optional(), redirectUris: uriList.optional(), postLogoutRedirectUris: uriList.optional() }))
    .output(applicationOutput)
    .mutation(async ({ ctx, input }) => {
      const { tenantSlug: _slug, id, ...changes } = input;
      return toApplicationOutput(await ctx.services.applications.update(ctx.scope, id, changes));
    }),

  delete: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/applications/{id}', protect: true, tags,
        summary: 'Delete an application: its grants, codes and tokens end at once',
        errorResponses: { ...adminErrors, 400: 'id is not a UUID', 403: 'Not an admin, or a test API key (`live_key_required`)' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.applications.delete(ctx.scope, input.id);
      return OK;
    }),

  rotateSecret: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/applications/{id}/rotate-secret', protect: true, tags,
        summary: 'A new client secret for a `web` or `m2m` application (shown once); the old one stops working at once',
        errorResponses: {
          ...adminErrors, 400: 'id is not a UUID', 403: 'Not an admin, or a test API key (`live_key_required`)',
          409: 'A public application has no secret (`application_has_no_secret`)',
        },
      },
      errorReasons: { 404: ['not_found'], 409: ['application_has_no_secret'] },
    })
    .input(idInput)
    .output(z.object({ clientSecret: clientSecretOutput }))
    .mutation(async ({ ctx, input }) => ({ clientSecret: await ctx.services.applications.rotateSecret(ctx.scope, input.id) })),

  roles: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/applications/{id}/roles', protect: true, tags: [...tags, 'access control'],
        summary: 'The roles an application holds (docs/oidc.md "Roles and permissions")', errorResponses: { ...adminErrors, 400: 'id is not a UUID' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(z.object({ roles: z.array(roleOutput) }))
    .query(async ({ ctx, input }) => ({ roles: (await ctx.services.roleAssignments.rolesOfApplication(ctx.em, ctx.tenant.id, input.id)).map(toRoleOutput) })),

  setRoles: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PUT', path: '/v1/{tenantSlug}/applications/{id}/roles', protect: true, tags: [...tags, 'access control'],
        summary: 'Replace the roles of an `m2m` application; its next `client_credentials` token carries what they grant',
        errorResponses: {
          ...adminErrors, 400: 'Invalid input, an unknown role (`unknown_role`), or not an m2m application (`application_not_m2m`)',
          403: 'Not an admin, or a test API key (`live_key_required`)',
        },
      },
      errorReasons: { 400: ['unknown_role', 'application_not_m2m'], 404: ['not_found'] },
    })
    .input(idInput.extend({ roleIds: roleIdsInput }))
    .output(z.object({ roles: z.array(roleOutput) }))
    .mutation(async ({ ctx, input }) => ({
      roles: (await ctx.services.roleAssignments.setRolesOfApplication(ctx.scope, input.id, input.roleIds)).map(toRoleOutput),
    })),
});
