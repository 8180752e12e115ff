import { z } from 'zod';
import { publicProcedure } from '../trpc.js';
import { TENANT_ERRORS } from '../services/tenants/tenant-errors.js';

/** The `{tenantSlug}` path parameter of every tenant-scoped route. */
export const tenantSlugInput = z.object({
  tenantSlug: z.string().min(1).max(200).meta({ description: 'Slug of the tenant (workspace)' }),
});

/**
 * A procedure under `/v1/{tenantSlug}`: resolves the live tenant into `ctx.tenant`. With an access
 * token, its session and user are read in the same query and carried to the auth middleware in
 * `ctx.sessionCheck` (see BearerAuthenticationService.resolveTenant and docs/architecture.md).
 * @throws ApiError 404 `tenant_not_found` for an unknown or deleted slug.
 */
export const tenantProcedure = publicProcedure.input(tenantSlugInput).use(async ({ ctx, input, next }) => {
  const resolved = await ctx.services.credentials.resolveTenant(ctx.em, input.tenantSlug, ctx.req.headers.authorization);
  if (!resolved) throw TENANT_ERRORS.tenantNotFound();
  return next({ ctx: { tenant: resolved.tenant, sessionCheck: resolved.sessionCheck } });
});

/**
 * A procedure under `/v1/{tenantSlug}` whose service finds the workspace itself, in the statement
 * that does the work (the refresh-token rotation, docs/performance.md "The refresh path"): one round
 * trip where resolving the tenant first would make two. Same input and OpenAPI path parameter as
 * {@link tenantProcedure}; the service answers 404 `tenant_not_found` for an unknown or deleted slug.
 */
export const tenantSlugProcedure = publicProcedure.input(tenantSlugInput);
