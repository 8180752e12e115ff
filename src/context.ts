import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import type { AppServices } from './app-services.js';
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
}

/** Builds the context of one request (shared by the REST façade and the /trpc endpoint). */
export function createRequestContext(services: AppServices, req: Request, res: Response): RequestContext {
  const userAgent = req.headers['user-agent'];
  const meta: RequestMeta = { ip: req.ip ?? null, userAgent: userAgent ? userAgent.slice(0, 512) : null };
  const locale = negotiateLocale(req.headers['accept-language']);
  if (locale) meta.locale = locale;
  return { services, em: services.orm.em.fork() as EntityManager, req, res, meta };
}
