import type { RequestScope, TenantScope } from '../lib/request-scope.js';

/**
 * The {@link RequestScope} of an authenticated procedure (`authenticatedProcedure` and the kinds
 * built on it), from its context: the request's entity manager, the tenant of the path, the
 * credential's actor and the request metadata. The one place a router builds a scope, so the
 * pipeline can later put it on the context (`ctx.scope`) without a router changing its calls.
 */
export function scopeOf(ctx: RequestScope): RequestScope {
  return { em: ctx.em, tenant: ctx.tenant, actor: ctx.actor, meta: ctx.meta };
}

/**
 * The {@link TenantScope} of a procedure under `/v1/{tenantSlug}` that takes no credential
 * (`tenantProcedure`: sign-up, sign-in, emailed links), from its context: the request's entity
 * manager, the tenant of the path and the request metadata.
 */
export function tenantScopeOf(ctx: TenantScope): TenantScope {
  return { em: ctx.em, tenant: ctx.tenant, meta: ctx.meta };
}
