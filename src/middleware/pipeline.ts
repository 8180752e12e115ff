import { z } from 'zod';
import type { RequestContext } from '../context.js';
import type { Tenant } from '../entities/tenant.js';
import type { User } from '../entities/user.js';
import { outageKind, serviceUnavailable, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../lib/outage.js';
import type { Actor } from '../lib/request-meta.js';
import { userActor, type RequestScope, type TenantScope } from '../lib/request-scope.js';
import type { Principal, SessionCheck, UserPrincipal } from '../services/sessions/bearer-authentication-service.js';
import { SESSION_ERRORS, SESSION_REASONS } from '../errors/session.js';
import { TENANT_ERRORS } from '../errors/tenant.js';
import { baseProcedure, middleware } from '../trpc.js';
import { spendCredentialBudget, spendProcedureBudgets } from './rate-limit.js';

/*
 * The request pipeline of every procedure (docs/architecture.md "The pipeline"), its steps in the
 * order they run. Each procedure kind at the end of this file is a prefix of this table:
 *
 *   1. guardOutages             a dependency that is down answers 503; a read retried once on a dropped connection
 *   2. spendProcedureBudgets    the per-IP and per-account budgets the procedure declares (meta `rateLimit`)
 *   3. resolveTenantAndSession  the live tenant by slug and, for an access token, its session and user: one query
 *                               → ctx.tenant, ctx.scope (a TenantScope: em, tenant, meta)
 *   4. authenticateCredential   the bearer judged from step 3's session check, or an API key by its hash
 *                               → ctx.principal, ctx.sessionUser, ctx.scope (a RequestScope: with the actor)
 *   5. spendCredentialBudget    600 per minute per session or API key
 *   6. requireUser | requireAdmin → requireLiveKey | requireAdminSession   the kind's own rule
 *
 * Steps 1–2 run as one tRPC middleware and steps 3–6 as another (step 3 alone for tenantProcedure):
 * every tRPC middleware level copies the call's options and context, on every request.
 *
 * Model: node-oidc-provider's `lib/actions/authorization/index.js` (one step table in run order).
 */

/** The `{tenantSlug}` path parameter of every tenant-scoped route. */
export const tenantSlugInput = z.object({
  tenantSlug: z.string().min(1).max(200).meta({ description: 'Slug of the tenant (workspace)' }),
});

/**
 * Step 1, outermost (docs/api-rules.md "Errors", docs/operations.md "Outages"): a failure because
 * PostgreSQL or Redis is down, restarting or dropped the connection answers 503 `SERVICE_UNAVAILABLE`
 * (`details.reason` `service_unavailable`, `Retry-After` header) instead of 500. A query (a read: REST
 * GET) whose connection dropped under it runs once more on a fresh entity manager, so a restart of the
 * database between two requests costs the client nothing; a mutation is never run twice (it may have
 * committed before the answer was lost). Also names the route for the request metrics: the procedure
 * path, never the raw URL (src/rest/request-metrics.ts).
 *
 * Step 2, inside it and before anything reads the database: the budgets of the procedure's meta
 * `rateLimit` (src/services/rate-limits/rate-limit-rules.ts), spent in src/middleware/rate-limit.ts; a
 * procedure that declares none passes straight on. Refuses with 429 `rate_limited` and `Retry-After`.
 */
const guardOutages = middleware(async ({ ctx, type, path, meta, getRawInput, next }) => {
  (ctx.res.locals as { route?: string }).route = path;
  // Step 2 runs inside this middleware rather than as one of its own: every tRPC middleware level
  // copies the call's options and context again (docs/performance.md "The request path, second pass").
  // What it throws (it may read the workspace's lockout policy) is judged like the procedure's failures.
  const rule = meta?.rateLimit;
  const run = (fresh?: { ctx: { em: RequestContext['em'] } }) => {
    const proceed = () => (fresh ? next(fresh) : next());
    return rule ? spendProcedureBudgets(ctx, path, rule, getRawInput, proceed) : proceed();
  };
  let thrown: unknown;
  const caught = (err: unknown) => {
    thrown = err;
    return undefined;
  };
  let result = await run().catch(caught);
  if (result?.ok) return result;
  let failure: unknown = result ? result.error : thrown;
  let kind = outageKind(failure);
  if (kind === 'dropped' && type === 'query') {
    ctx.services.logger.warn({ path, err: causeOf(failure) }, 'read failed on a dropped database connection; retrying once');
    result = await run({ ctx: { em: ctx.services.orm.em.fork() as RequestContext['em'] } }).catch(caught);
    if (result?.ok) return result;
    failure = result ? result.error : thrown;
    kind = outageKind(failure);
  }
  if (!kind) {
    if (result) return result;
    throw failure;
  }
  ctx.services.logger.warn({ path, kind, err: causeOf(failure) }, 'dependency unavailable; answered 503');
  if (!ctx.res.headersSent) ctx.res.setHeader('Retry-After', String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS));
  throw serviceUnavailable();
});

/** The error under tRPC's wrapper, for the log. */
function causeOf(failure: unknown): unknown {
  return (failure as { cause?: unknown } | undefined)?.cause ?? failure;
}

/** What step 3 adds to the context. */
export interface TenantAndSession {
  tenant: Tenant;
  /** The access token's session check, read with the tenant; undefined without an access token. */
  sessionCheck: SessionCheck | undefined;
  /** The request's scope before a credential is judged (sign-up, sign-in, emailed links): what services take first. */
  scope: TenantScope;
}

/**
 * Step 3: the live tenant of `{tenantSlug}`. With an access token, its session and user are read in
 * the same query and carried to step 4 as `sessionCheck` (BearerAuthenticationService.resolveTenant).
 * Without one, the row step 2 read for the brute-force guard is taken when there is one.
 * @throws ApiError 404 `tenant_not_found` for an unknown or deleted slug.
 */
async function resolveTenantAndSession(ctx: RequestContext, tenantSlug: string): Promise<TenantAndSession> {
  const early = ctx.tenantReadByGuard;
  const readEarlier = early && early.slug === tenantSlug && early.em === ctx.em ? early.tenant : undefined;
  const resolved = await ctx.services.credentials.resolveTenant(ctx.em, tenantSlug, ctx.req.headers.authorization, readEarlier);
  if (!resolved) throw TENANT_ERRORS.tenantNotFound();
  return { ...resolved, scope: { em: ctx.em, tenant: resolved.tenant, meta: ctx.meta } };
}

/** The audit actor of a principal. */
function actorOf(principal: Principal): Actor {
  return principal.kind === 'user' ? userActor(principal.userId) : { type: 'api_key', id: principal.apiKeyId };
}

/**
 * The user row step 3 read with the session check, when it is the principal's live user (GET me
 * answers from it without a second read), else undefined.
 */
function userReadWithSession(principal: Principal, sessionCheck: SessionCheck | undefined): User | undefined {
  const user = sessionCheck?.verified ? sessionCheck.user : undefined;
  if (principal.kind !== 'user' || !user) return undefined;
  return user.id === principal.userId && user.tenantId === principal.tenantId && !user.deletedAt ? user : undefined;
}

/** What steps 4 and 5 add to the context. */
export interface Authenticated {
  principal: Principal;
  /** The user row step 3 read with the session check, when it is the principal's live user. */
  sessionUser: User | undefined;
  /** The request's scope (src/lib/request-scope.ts): its entity manager, workspace, actor and metadata, what services take first. */
  scope: RequestScope;
}

/**
 * Steps 4 and 5: any credential of the route's tenant, a user's access token (judged from step 3's
 * session check, no second query) or an API key (docs/security.md), then its per-credential budget.
 * @throws ApiError 401 with the credential service's reasons; 429 when the credential's budget is spent.
 */
async function authenticateCredential(ctx: RequestContext, { tenant, sessionCheck, scope }: TenantAndSession): Promise<Authenticated> {
  const principal = await ctx.services.credentials.authenticate(ctx.em, tenant, ctx.req.headers.authorization, sessionCheck);
  await spendCredentialBudget(ctx, principal);
  return { principal, sessionUser: userReadWithSession(principal, sessionCheck), scope: { ...scope, actor: actorOf(principal) } };
}

/**
 * The one rule of test keys (docs/security.md "Test keys"): a change that grants access needs an
 * Admin user or an `ak_live_` key.
 * @throws ApiError 403 `live_key_required` for an `ak_test_` key.
 */
export function requireLiveCredential(principal: Principal): void {
  if (principal.kind === 'api_key' && principal.environment !== 'live') {
    throw SESSION_ERRORS.liveKeyRequired();
  }
}

// ---------------------------------------------------------------------------------------------
// The procedure kinds: each one the steps above, in order, up to its own rule (step 6).
// ---------------------------------------------------------------------------------------------

/** Steps 1–2: every procedure, including those outside a workspace (`POST /v1/tenants`). */
export const publicProcedure = baseProcedure.use(guardOutages);

/** Steps 1–3: a route under `/v1/{tenantSlug}`, with or without a credential. */
export const tenantProcedure = publicProcedure
  .input(tenantSlugInput)
  .use(async ({ ctx, input, next }) => next({ ctx: await resolveTenantAndSession(ctx, input.tenantSlug) }));

/**
 * Steps 1–2 under `/v1/{tenantSlug}`, whose service finds the workspace itself in the statement that
 * does the work (the refresh-token rotation, docs/performance.md "The refresh path"): one round trip
 * where step 3 first would make two. The service answers 404 `tenant_not_found` for an unknown or
 * deleted slug.
 */
export const tenantSlugProcedure = publicProcedure.input(tenantSlugInput);

/**
 * Steps 3–5 and then the kind's own rule (step 6), in one tRPC middleware: each middleware level
 * copies the call's options and context, which is measurable on every authenticated request
 * (docs/performance.md "The request path, second pass").
 */
function credentialSteps<P extends Principal>(rule: (principal: Principal) => P) {
  return middleware(async ({ ctx, input, next }) => {
    const tenantAndSession = await resolveTenantAndSession(ctx, (input as { tenantSlug: string }).tenantSlug);
    const authenticated = await authenticateCredential(ctx, tenantAndSession);
    return next({ ctx: { ...tenantAndSession, ...authenticated, principal: rule(authenticated.principal) } });
  });
}

/** Steps 1–5: any credential of the tenant. */
export const authenticatedProcedure = publicProcedure.input(tenantSlugInput).use(credentialSteps((principal) => principal));

/** Step 6, requireUser: a user's access token; an API key gets 401 `user_token_required`. */
function requireUser(principal: Principal): UserPrincipal {
  if (principal.kind !== 'user') throw SESSION_ERRORS.userTokenRequired();
  return principal;
}

/** Step 6, requireAdmin: an Admin user or an API key of the tenant; a Member gets 403 `admin_required`. */
function requireAdmin(principal: Principal): Principal {
  if (principal.kind === 'user' && principal.role !== 'Admin') throw SESSION_ERRORS.adminRequired();
  return principal;
}

/**
 * User-only routes (`/me*`, `logout-all`, `mfa/*`), steps 1–6 with requireUser; the kind adds 401
 * `user_token_required` to every such route's documented reasons.
 */
export const userProcedure = publicProcedure
  .meta({ kindErrorReasons: { 401: [SESSION_REASONS.userTokenRequired] } })
  .input(tenantSlugInput)
  .use(credentialSteps(requireUser));

/**
 * Tenant administration (docs/security.md, roles), steps 1–6 with requireAdmin: an Admin user or an
 * API key of the tenant; the kind adds 403 `admin_required` to every such route's documented reasons.
 */
export const adminProcedure = publicProcedure
  .meta({ kindErrorReasons: { 403: [SESSION_REASONS.adminRequired] } })
  .input(tenantSlugInput)
  .use(credentialSteps(requireAdmin));

/**
 * Steps 1–6 with requireAdmin then requireLiveKey: changes that grant access or weaken the tenant's
 * security (docs/security.md "Test keys", docs/api-rules.md "Test keys grant nothing"): API keys,
 * users' roles, status and factors, applications, tenant settings, the identity provider, webhooks. An
 * Admin user or an `ak_live_` key; an `ak_test_` key may read and exercise but not change them (403
 * `live_key_required`).
 */
export const securityAdminProcedure = publicProcedure
  .meta({ kindErrorReasons: { 403: [SESSION_REASONS.adminRequired, SESSION_REASONS.liveKeyRequired] } })
  .input(tenantSlugInput)
  .use(
    credentialSteps((principal) => {
      requireLiveCredential(requireAdmin(principal));
      return principal;
    }),
  );

/**
 * Steps 1–6 with requireAdmin then requireAdminSession: changes whose holder decides who signs in
 * (docs/sso.md "Who may change a connection"): an Admin *user* only, since an API key, even a live
 * one, leaks more easily than a person's session (403 `admin_session_required`). The service then
 * checks the sign-in is recent.
 */
export const adminSessionProcedure = publicProcedure
  .meta({ kindErrorReasons: { 403: [SESSION_REASONS.adminRequired, SESSION_REASONS.adminSessionRequired] } })
  .input(tenantSlugInput)
  .use(
    credentialSteps((principal): UserPrincipal => {
      requireAdmin(principal);
      if (principal.kind !== 'user') throw SESSION_ERRORS.adminSessionRequired();
      return principal;
    }),
  );
