import { initTRPC } from '@trpc/server';
import type { RequestContext } from './context.js';
import { ApiError, DEFAULT_MESSAGES } from './lib/errors.js';
import type { ProcedureMeta } from './lib/procedure-meta.js';
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
/**
 * The base of every procedure: applies the rate limits of src/services/rate-limits/rate-limit-rules.ts for the
 * procedure's path before anything else runs (429 with `Retry-After`).
 */
export const publicProcedure = t.procedure.use(({ ctx, path, getRawInput, next }) => applyRateLimits(ctx, path, getRawInput, next));
