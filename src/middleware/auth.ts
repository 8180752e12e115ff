import type { Actor } from '../lib/request-meta.js';
import type { User } from '../entities/user.js';
import type { Principal, SessionCheck } from '../services/sessions/bearer-authentication-service.js';
import { limitCredential } from './rate-limit.js';
import { tenantProcedure } from './tenant.js';
import { SESSION_ERRORS, SESSION_REASONS } from '../services/sessions/session-errors.js';

/** The audit actor of a principal. */
export function actorOf(principal: Principal): Actor {
  return principal.kind === 'user' ? { type: 'user', id: principal.userId } : { type: 'api_key', id: principal.apiKeyId };
}

/**
 * The user row the tenant query read with the session check, when it is the principal's live user
 * (GET me answers from it without a second read), else undefined.
 */
function userReadWithSession(principal: Principal, sessionCheck: SessionCheck | undefined): User | undefined {
  const user = sessionCheck?.verified ? sessionCheck.user : undefined;
  if (principal.kind !== 'user' || !user) return undefined;
  return user.id === principal.userId && user.tenantId === principal.tenantId && !user.deletedAt ? user : undefined;
}

/**
 * Any credential of the route's tenant: a user's access token or an API key (docs/security.md),
 * within its per-credential rate limit. Adds `principal`, `actor` and `sessionUser` (the user row
 * read with the session check, when there is one) to the context.
 * @throws ApiError 401 with the credential service's reasons; 429 when the credential's budget is spent.
 */
export const authenticatedProcedure = tenantProcedure.use(async ({ ctx, next }) => {
  const principal = await ctx.services.credentials.authenticate(ctx.em, ctx.tenant, ctx.req.headers.authorization, ctx.sessionCheck);
  await limitCredential(ctx, principal);
  return next({ ctx: { principal, actor: actorOf(principal), sessionUser: userReadWithSession(principal, ctx.sessionCheck) } });
});

/**
 * User-only routes (`/me*`, `logout-all`, `mfa/*`): an API key gets 401 `user_token_required`,
 * which the kind adds to every such route's documented reasons (`kindErrorReasons`).
 */
export const userProcedure = authenticatedProcedure
  .meta({ kindErrorReasons: { 401: [SESSION_REASONS.userTokenRequired] } })
  .use(({ ctx, next }) => {
    const { principal } = ctx;
    if (principal.kind !== 'user') throw SESSION_ERRORS.userTokenRequired();
    return next({ ctx: { principal } });
  });

/**
 * Tenant administration (docs/security.md, roles): an Admin user or an API key of the tenant. The
 * kind adds `admin_required` to every such route's documented reasons (`kindErrorReasons`).
 * @throws ApiError 403 `admin_required` for a Member.
 */
export const adminProcedure = authenticatedProcedure
  .meta({ kindErrorReasons: { 403: [SESSION_REASONS.adminRequired] } })
  .use(({ ctx, next }) => {
    if (ctx.principal.kind === 'user' && ctx.principal.role !== 'Admin') {
      throw SESSION_ERRORS.adminRequired();
    }
    return next();
  });

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

/**
 * Changes that grant access or weaken the tenant's security (docs/security.md "Test keys",
 * docs/api-rules.md "Test keys grant nothing"): API keys, users' roles, status and factors,
 * applications, tenant settings, the identity provider, webhooks. An Admin user or an `ak_live_` key;
 * an `ak_test_` key, meant for integration tests and development against the tenant, may read and
 * exercise but not change them. The kind adds `admin_required` and `live_key_required` to every such
 * route's documented reasons (`kindErrorReasons`).
 * @throws ApiError 403 `admin_required` for a Member, 403 `live_key_required` for an `ak_test_` key.
 */
export const securityAdminProcedure = adminProcedure
  .meta({ kindErrorReasons: { 403: [SESSION_REASONS.adminRequired, SESSION_REASONS.liveKeyRequired] } })
  .use(({ ctx, next }) => {
    requireLiveCredential(ctx.principal);
    return next();
  });

/**
 * Changes whose holder decides who signs in (docs/sso.md "Who may change a connection"): an Admin
 * *user* only, since an API key, even a live one, is a credential that leaks more easily than a
 * person's session. The service then checks the sign-in is recent. The kind adds `admin_required`
 * and `admin_session_required` to every such route's documented reasons (`kindErrorReasons`).
 * @throws ApiError 403 `admin_required` for a Member, 403 `admin_session_required` for an API key.
 */
export const adminSessionProcedure = adminProcedure
  .meta({ kindErrorReasons: { 403: [SESSION_REASONS.adminRequired, SESSION_REASONS.adminSessionRequired] } })
  .use(({ ctx, next }) => {
    const { principal } = ctx;
    if (principal.kind !== 'user') throw SESSION_ERRORS.adminSessionRequired();
    return next({ ctx: { principal } });
  });
