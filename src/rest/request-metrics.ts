import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from '../services/metrics/metrics.js';
import { restRouteLabel } from './route-labels.js';

/** Where a procedure names itself for the request metrics (set by the tRPC base procedure). */
export interface RouteLocals {
  route?: string;
}

/** Routes served outside the procedures, by exact path. */
const FIXED_ROUTES = new Set(['/health', '/ready', '/v1/openapi.json']);

/**
 * The route label of a request that no procedure named: a fixed route, the procedure whose REST
 * operation it addressed (refused before the procedure ran), the OpenID provider's endpoint, the
 * hosted pages, or `unmatched` (so a scan of random URLs never grows the label set).
 */
function routeOf(method: string, path: string): string {
  if (FIXED_ROUTES.has(path)) return path;
  if (path.startsWith('/trpc')) return 'trpc';
  if (path.startsWith('/app') || path.startsWith('/docs') || path === '/') return 'web';
  return restRouteLabel(method, path) ?? 'unmatched';
}

/**
 * Express middleware counting every answer in the metrics (docs/operations.md "Metrics"): route
 * pattern (the procedure path such as `auth.refresh`, never the raw path with ids or slugs), method,
 * transport and status, with the time to the end of the answer; and the requests in flight.
 */
export function countRequests(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    // read now: a router mounted below (the OpenID provider's) rewrites req.url, and so req.path, on the way
    const path = req.path;
    metrics.requestStarted();
    // 'close' follows 'finish' and also comes alone when the client goes away first: the request leaves the in-flight count once
    res.once('close', () => metrics.requestEnded());
    res.on('finish', () => {
      const route = (res.locals as RouteLocals).route ?? routeOf(req.method, path);
      const transport = path.startsWith('/trpc') ? 'trpc' : path.startsWith('/v1/') ? 'rest' : 'other';
      metrics.observeRequest(route, req.method, transport, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
