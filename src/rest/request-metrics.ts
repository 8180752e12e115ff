import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from '../services/metrics/metrics.js';

/** Where a procedure names itself for the request metrics (set by the tRPC base procedure). */
export interface RouteLocals {
  route?: string;
}

/** Routes served outside the procedures, by exact path. */
const FIXED_ROUTES = new Set(['/health', '/ready', '/v1/openapi.json']);

/**
 * The route label of a request that no procedure named: a fixed route, the hosted pages, or
 * `unmatched` (so a scan of random URLs never grows the label set).
 */
function routeOf(req: Request): string {
  if (FIXED_ROUTES.has(req.path)) return req.path;
  if (req.path.startsWith('/trpc')) return 'trpc';
  if (req.path.startsWith('/app') || req.path.startsWith('/docs') || req.path === '/') return 'web';
  return 'unmatched';
}

/**
 * Express middleware counting every answer in the metrics (docs/operations.md "Metrics"): route
 * pattern (the procedure path such as `auth.refresh`, never the raw path with ids or slugs), method,
 * transport and status, with the time to the end of the answer.
 */
export function countRequests(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (res.locals as RouteLocals).route ?? routeOf(req);
      const transport = req.path.startsWith('/trpc') ? 'trpc' : req.path.startsWith('/v1/') ? 'rest' : 'other';
      metrics.observeRequest(route, req.method, transport, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
