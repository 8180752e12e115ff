import { initTRPC } from '@trpc/server';
import type { RequestContext } from './context.js';
import { ApiError, DEFAULT_MESSAGES } from './lib/errors.js';
import type { ProcedureMeta } from './lib/procedure-meta.js';
// every feature's reason catalog, so `ErrorReason` is complete wherever a procedure is defined
import type {} from './errors/index.js';

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

/** The bare procedure builder; every procedure kind is built from it in src/middleware/pipeline.ts. */
export const baseProcedure = t.procedure;
/** Builds one step of the request pipeline (src/middleware/pipeline.ts). */
export const middleware = t.middleware;
