import { initTRPC } from '@trpc/server';
import type { RequestContext } from './context.js';
import { ApiError, DEFAULT_MESSAGES } from './lib/errors.js';
import { outageKind, serviceUnavailable, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS } from './lib/outage.js';
import type { ProcedureMeta } from './lib/procedure-meta.js';
// every feature's reason catalog, so `ErrorReason` is complete wherever a procedure is defined
import type {} from './services/error-catalogs.js';
import { applyRateLimits } from './middleware/rate-limit.js';

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
}

function zodIssues(cause: unknown): { path: string; message: string }[] | undefined {
  if (typeof cause !== 'object' || cause === null || !('issues' in cause)) return undefined;
  const issues = (cause as { issues: unknown }).issues;
  if (!Array.isArray(issues)) return undefined;
  return (issues as ZodLikeIssue[]).map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/** The `data` every error carries on the tRPC endpoint; the REST façade turns it into the envelope. */
interface ErrorData {
  code: string;
  httpStatus: number;
  path?: string;
  details: Record<string, unknown>;
}

const t = initTRPC
  .context<RequestContext>()
  .meta<ProcedureMeta>()
  .create({
    errorFormatter({ shape, error }) {
      const issues = error.code === 'BAD_REQUEST' ? zodIssues(error.cause) : undefined;
      const details = error instanceof ApiError ? error.details : issues ? { reason: 'validation_failed', issues } : {};
      const internal = error.code === 'INTERNAL_SERVER_ERROR';
      const data: ErrorData = { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, details };
      return {
        ...shape,
        message: internal ? DEFAULT_MESSAGES.INTERNAL_SERVER_ERROR : issues ? 'Request validation failed' : shape.message,
        data,
      };
    },
  });

export const router = t.router;
/** Merges routers into one with the procedures of all (a feature's router split by method, e.g. `auth`). */
export const mergeRouters = t.mergeRouters;

/**
 * The outermost step of every procedure (docs/api-rules.md "Errors", docs/operations.md "Outages"): a
 * failure because PostgreSQL or Redis is down, restarting or dropped the connection answers 503
 * `SERVICE_UNAVAILABLE` (`details.reason` `service_unavailable`, `Retry-After` header) instead of 500.
 * A query (a read: REST GET) whose connection dropped under it runs once more on a fresh entity
 * manager, so a restart of the database between two requests costs the client nothing; a mutation
 * is never run twice (it may have committed before the answer was lost).
 */
const outageGuard = t.middleware(async ({ ctx, type, path, next }) => {
  // The route label of the request metrics: the procedure path, never the raw URL (src/rest/request-metrics.ts).
  (ctx.res.locals as { route?: string }).route = path;
  let result = await next();
  if (result.ok) return result;
  let kind = outageKind(result.error);
  if (kind === 'dropped' && type === 'query') {
    ctx.services.logger.warn({ path, err: result.error.cause ?? result.error }, 'read failed on a dropped database connection; retrying once');
    result = await next({ ctx: { em: ctx.services.orm.em.fork() } });
    if (result.ok) return result;
    kind = outageKind(result.error);
  }
  if (!kind) return result;
  ctx.services.logger.warn({ path, kind, err: result.error.cause ?? result.error }, 'dependency unavailable; answered 503');
  if (!ctx.res.headersSent) ctx.res.setHeader('Retry-After', String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS));
  throw serviceUnavailable();
});

/**
 * The base of every procedure: maps dependency outages to 503 ({@link outageGuard}), then applies the
 * rate limits of src/services/rate-limits/rate-limit-rules.ts for the procedure's path before anything
 * else runs (429 with `Retry-After`).
 */
export const publicProcedure = t.procedure
  .use(outageGuard)
  .use(({ ctx, path, getRawInput, next }) => applyRateLimits(ctx, path, getRawInput, next));
