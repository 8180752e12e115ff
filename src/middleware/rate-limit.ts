import { TRPCError } from '@trpc/server';
import { normalizeEmail } from '../lib/email.js';
import { ApiError, REQUEST_ERRORS } from '../lib/errors.js';
import type { Principal } from '../services/sessions/bearer-authentication-service.js';
import type { Tenant } from '../entities/tenant.js';
import { lockoutBudget, lockoutPolicyOf, type LockoutPolicy } from '../services/rate-limits/account-lockout.js';
import {
  ACCOUNT_FAILURES_ALL_IPS,
  KNOWN_SIGN_IN_IP,
  PASSWORD_ACCEPTED_REASONS,
  PER_CREDENTIAL,
} from '../services/rate-limits/rate-limit-rules.js';
import type { AccountAttemptMode, ProcedureRateLimits, RateLimitBudget } from '../lib/rate-limit-budget.js';
import { rateLimitClientKey } from '../services/rate-limits/rate-limiter.js';
import type { RequestContext } from '../context.js';

/** What a tRPC middleware's `next()` resolves to, as far as the limits need it. */
interface NextResult {
  ok: boolean;
  error?: unknown;
}

/** What spending a budget needs of a request, on the tRPC context or on a plain Express route. */
type SpendingRequest = Pick<RequestContext, 'services' | 'res'> & { ip: string | null };

/**
 * Spends one hit of `budget` for `key` (docs/security.md "Rate limits"), for the procedures and for
 * the routes outside them (the OpenID provider's mount).
 * @returns undefined when allowed; else the 429 `rate_limited` error (`details.retryAfterSeconds`),
 *   after setting the `Retry-After` header (RFC 9110 §10.2.3) and logging the refusal.
 */
export async function spendBudget(request: SpendingRequest, budget: RateLimitBudget, key: string): Promise<ApiError | undefined> {
  const decision = await request.services.rateLimits.consume(budget, key);
  return decision.allowed ? undefined : refusal(request, budget, decision.retryAfterSeconds);
}

/**
 * Spends one hit of `budget` for `key` in a procedure.
 * @throws ApiError 429 `TOO_MANY_REQUESTS` with `details.retryAfterSeconds` (see {@link spendBudget}).
 */
async function spend(ctx: RequestContext, budget: RateLimitBudget, key: string): Promise<void> {
  const refused = await spendBudget({ services: ctx.services, res: ctx.res, ip: ctx.meta.ip }, budget, key);
  if (refused) throw refused;
}

function refuse(ctx: RequestContext, budget: RateLimitBudget, retryAfterSeconds: number): ApiError {
  return refusal({ services: ctx.services, res: ctx.res, ip: ctx.meta.ip }, budget, retryAfterSeconds);
}

function refusal(request: SpendingRequest, budget: RateLimitBudget, retryAfterSeconds: number): ApiError {
  if (!request.res.headersSent) request.res.setHeader('Retry-After', String(retryAfterSeconds));
  request.services.logger.info({ budget: budget.name, ip: request.ip, retryAfterSeconds }, 'rate limited');
  return REQUEST_ERRORS.rateLimited({ retryAfterSeconds });
}

/** `tenantSlug:email` (`key`) from a procedure's raw input, or null when either is missing. */
function accountKeyOf(rawInput: unknown): { key: string; tenantSlug: string } | null {
  if (typeof rawInput !== 'object' || rawInput === null) return null;
  const { tenantSlug, email } = rawInput as { tenantSlug?: unknown; email?: unknown };
  if (typeof tenantSlug !== 'string' || typeof email !== 'string' || !tenantSlug || !email.includes('@') || email.length > 254) return null;
  return { key: `${tenantSlug}:${normalizeEmail(email)}`, tenantSlug };
}

type Outcome = 'success' | 'failure' | 'not_an_attempt';

/** Classifies a credential procedure's result for the brute-force counters. */
function outcomeOf(result: NextResult): Outcome {
  if (result.ok) return 'success';
  const error = result.error;
  if (!(error instanceof TRPCError) || error.code !== 'UNAUTHORIZED') return 'not_an_attempt';
  const reason = error instanceof ApiError ? error.details.reason : undefined;
  return PASSWORD_ACCEPTED_REASONS.has(reason) ? 'not_an_attempt' : 'failure';
}

/**
 * OWASP brute-force defence around a credential-checking procedure. One attempt is reserved before
 * the procedure runs (so a parallel burst cannot exceed the budget), in two counters:
 * - account + client IP: the workspace's lockout policy (`lockoutBudget`, default 10 per 15
 *   minutes); a success from that IP clears it, an attacker elsewhere never touches it, and an
 *   Admin's unlock starts it afresh (a new generation in its key, AccountLockoutService);
 * - account across all IPs (`ACCOUNT_FAILURES_ALL_IPS`): a higher bound against distributed
 *   guessing, skipped for an IP the account signed in from within `KNOWN_SIGN_IN_IP`, so the real
 *   user's usual address is not locked out by it either.
 * Answers that are not failed guesses (validation, unknown tenant, `mfa_required`, …) give the
 * reserved attempt back.
 */
async function guardAccount<R extends NextResult>(
  ctx: RequestContext,
  accountKey: string,
  clientKey: string,
  mode: AccountAttemptMode,
  policy: LockoutPolicy | Promise<LockoutPolicy>,
  next: () => Promise<R>,
): Promise<R> {
  const limits = ctx.services.rateLimits;
  const accountIpKey = `${accountKey}|${clientKey}`;
  // what the guard reads, at once rather than one round trip after the other: the workspace's
  // policy, the address's unlock generation (part of the counter's key) and whether this IP is known
  const [lockoutPolicy, lockoutKey, knownIp] = await Promise.all([
    policy, ctx.services.accountLockout.counterKey(accountKey, clientKey), limits.isMarked(KNOWN_SIGN_IN_IP, accountIpKey),
  ]);
  const lockout = lockoutBudget(lockoutPolicy);
  await spend(ctx, lockout, lockoutKey);
  if (!knownIp) {
    const accountWide = await limits.consume(ACCOUNT_FAILURES_ALL_IPS, accountKey);
    if (!accountWide.allowed) {
      await limits.refund(lockout, lockoutKey);
      throw refuse(ctx, ACCOUNT_FAILURES_ALL_IPS, accountWide.retryAfterSeconds);
    }
  }
  const refundAccountWide = () => (knownIp ? Promise.resolve() : limits.refund(ACCOUNT_FAILURES_ALL_IPS, accountKey));

  const result = await next();
  const outcome = outcomeOf(result);
  if (outcome === 'not_an_attempt') {
    await Promise.all([limits.refund(lockout, lockoutKey), refundAccountWide()]);
  } else if (outcome === 'success' && mode === 'reset') {
    await Promise.all([limits.reset(lockout, lockoutKey), refundAccountWide(), limits.mark(KNOWN_SIGN_IN_IP, accountIpKey)]);
  }
  return result;
}

/**
 * The budgets a procedure declares in its meta (`rateLimit`, docs/api-rules.md "Rate limits"): spends
 * the per-IP budget, then runs the procedure inside the per-account brute-force guard when the rule
 * has one. Runs before input parsing, so it reads `tenantSlug` and `email` from the raw input. Nothing
 * is read from the database before the per-IP budget allowed the request; the guard's read of the
 * workspace is left on the context for step 3 (`tenantReadByGuard`).
 * @param path the procedure path, part of the per-IP key so each route has its own budget.
 * @throws ApiError 429 with `Retry-After` when a budget is spent.
 */
export async function spendProcedureBudgets<R extends NextResult>(
  ctx: RequestContext,
  path: string,
  rule: ProcedureRateLimits,
  getRawInput: () => Promise<unknown>,
  next: () => Promise<R>,
): Promise<R> {
  const clientKey = rateLimitClientKey(ctx.meta.ip);
  if (rule.ip) await spend(ctx, rule.ip, `${path}|${clientKey}`);
  if (!rule.account) return next();
  const account = accountKeyOf(await getRawInput());
  if (!account) return next();
  // the whole row, not only its policy: step 3 takes this read instead of making its own
  const tenant = ctx.services.credentials.resolveTenant(ctx.em, account.tenantSlug, undefined).then((resolved) => resolved?.tenant ?? null);
  ctx.tenantReadByGuard = { slug: account.tenantSlug, em: ctx.em, tenant };
  return guardAccount(ctx, account.key, clientKey, rule.account, tenant.then(lockoutPolicyOf), next);
}

/**
 * Runs a service call that may refuse with its own 429 (e.g. the daily invite limit) and sets the
 * `Retry-After` header (RFC 9110 §10.2.3) from the error's `details.retryAfterSeconds`.
 */
export async function withRetryAfter<T>(res: RequestContext['res'], call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const seconds = err instanceof ApiError && err.code === 'TOO_MANY_REQUESTS' ? err.details.retryAfterSeconds : undefined;
    if (typeof seconds === 'number' && !res.headersSent) res.setHeader('Retry-After', String(seconds));
    throw err;
  }
}

/**
 * Runs a password check that has no `email` in its input (`PATCH me/password`) inside the same
 * per-account brute-force budget as login ({@link guardAccount}, mode `reset`, the workspace's
 * lockout policy), keyed by the tenant slug and the account's email, so guesses there and at login
 * share one budget.
 * @throws ApiError 429 with `Retry-After` when the budget is spent; otherwise what `attempt` throws.
 */
export async function withAccountBudget<T>(
  ctx: RequestContext,
  tenant: Pick<Tenant, 'slug'> & LockoutPolicy,
  email: string,
  attempt: () => Promise<T>,
): Promise<T> {
  type Outcome = NextResult & { value?: T };
  const accountKey = `${tenant.slug}:${normalizeEmail(email)}`;
  const result = await guardAccount<Outcome>(ctx, accountKey, rateLimitClientKey(ctx.meta.ip), 'reset', tenant, async () => {
    try {
      return { ok: true, value: await attempt() };
    } catch (error) {
      return { ok: false, error };
    }
  });
  if (!result.ok) throw result.error;
  return result.value as T;
}

/**
 * The per-credential budget of authenticated routes (600 per minute, docs/api-rules.md "Rate limits"): keyed by the
 * session of a user access token, or by the API key.
 * @throws ApiError 429 with `Retry-After` when the budget is spent.
 */
export async function spendCredentialBudget(ctx: RequestContext, principal: Principal): Promise<void> {
  const key = principal.kind === 'user' ? `session:${principal.sessionId}` : `api_key:${principal.apiKeyId}`;
  await spend(ctx, PER_CREDENTIAL, key);
}
