import type { EntityManager } from '@mikro-orm/postgresql';
import { initTRPC } from '@trpc/server';
import type { Request, Response } from 'express';
import type { AppServices } from './app-services.js';
import { ApiError, DEFAULT_MESSAGES } from './lib/errors.js';
import type { ProcedureMeta } from './lib/procedure-meta.js';
import type { RequestMeta } from './lib/request-meta.js';
import { applyRateLimits } from './middleware/rate-limit.js';

/** What every procedure sees: the services, a request-scoped entity manager and the HTTP exchange. */
export interface RequestContext {
  services: AppServices;
  /** A fork of the ORM's entity manager for this request only. */
  em: EntityManager;
  req: Request;
  res: Response;
  meta: RequestMeta;
}

/** Builds the context of one request (shared by the REST façade and the /trpc endpoint). */
export function createRequestContext(services: AppServices, req: Request, res: Response): RequestContext {
  const userAgent = req.get('user-agent');
  return {
    services,
    em: services.orm.em.fork() as EntityManager,
    req,
    res,
    meta: { ip: req.ip ?? null, userAgent: userAgent ? userAgent.slice(0, 512) : null },
  };
}

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
export interface ErrorData {
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
export const middleware = t.middleware;
/**
 * The base of every procedure: applies the rate limits of src/services/rate-limit-rules.ts for the
 * procedure's path before anything else runs (429 with `Retry-After`).
 */
export const publicProcedure = t.procedure.use(({ ctx, path, getRawInput, next }) => applyRateLimits(ctx, path, getRawInput, next));
export const createCallerFactory = t.createCallerFactory;
