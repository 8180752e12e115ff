import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import type { AppServices } from './app-services.js';
import type { Tenant } from './entities/tenant.js';
import { negotiateLocale } from './lib/locales.js';
import type { RequestMeta } from './lib/request-meta.js';

/**
 * What every procedure sees: the services, a request-scoped entity manager and the HTTP exchange.
 * The pipeline adds the request's own data on top (`tenant`, `sessionCheck`, `principal`,
 * `sessionUser`, `scope`; src/middleware/pipeline.ts), so nothing about a request is kept in a service.
 */
export interface RequestContext {
  services: AppServices;
  /** A fork of the ORM's entity manager for this request only. */
  em: EntityManager;
  req: Request;
  res: Response;
  meta: RequestMeta;
  /**
   * The live tenant of the route's slug as the brute-force guard read it (pipeline step 2, for its
   * lockout policy), with the entity manager it was read with; step 3 takes it instead of reading
   * the same row again. Absent on every other request.
   */
  tenantReadByGuard?: { slug: string; em: EntityManager; tenant: Promise<Tenant | null> };
}

/** Builds the context of one request (shared by the REST façade and the /trpc endpoint). */
export function createRequestContext(services: AppServices, req: Request, res: Response): RequestContext {
  const userAgent = req.headers['user-agent'];
  const meta: RequestMeta = { ip: req.ip ?? null, userAgent: userAgent ? userAgent.slice(0, 512) : null };
  const locale = negotiateLocale(req.headers['accept-language']);
  if (locale) meta.locale = locale;
  return { services, em: services.orm.em.fork() as EntityManager, req, res, meta };
}
