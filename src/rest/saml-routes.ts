import type { EntityManager } from '@mikro-orm/postgresql';
import express, { type Request, type Response, type Router } from 'express';
import type { AppServices } from '../app-services.js';
import type { Tenant } from '../entities/tenant.js';
import { ApiError } from '../lib/errors.js';
import type { RequestMeta } from '../lib/request-meta.js';
import { MAX_SAML_XML_BYTES } from '../services/sso/saml-xml.js';
import { sendError } from './error-envelope.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9-]{1,100}$/;

/**
 * The SAML endpoints of each connection (docs/sso.md), outside the JSON API because SAML speaks XML
 * and HTML forms:
 * - `GET /v1/{slug}/sso/{connectionId}/saml/metadata`: the service provider's metadata (XML).
 * - `POST /v1/{slug}/sso/{connectionId}/saml/acs`: the assertion consumer service (HTTP-POST binding,
 *   `application/x-www-form-urlencoded` `SAMLResponse`). It answers 303 to the hosted page
 *   `/app/{slug}/sso-callback` with `#code=…` (a single-use completion code, in the fragment so it
 *   never reaches a server log or a Referer) or `#error=<reason>`.
 * Unknown workspaces and connections are 404 `not_found` (JSON envelope).
 */
export function samlRoutes(services: AppServices): Router {
  const routes = express.Router();
  routes.get('/v1/:slug/sso/:connectionId/saml/metadata', (req, res, next) => {
    withConnection(services, req, res, async (em, tenant, connectionId) => {
      const xml = await services.saml.metadata(em, tenant, connectionId);
      res.type('application/samlmetadata+xml').send(xml);
    }).catch(next);
  });
  routes.post(
    '/v1/:slug/sso/:connectionId/saml/acs',
    express.urlencoded({ extended: false, limit: Math.ceil((MAX_SAML_XML_BYTES * 4) / 3) + 4096, parameterLimit: 10 }),
    (req, res, next) => {
      withConnection(services, req, res, async (em, tenant, connectionId) => {
        const body = (req.body ?? {}) as Record<string, unknown>;
        const samlResponse = typeof body.SAMLResponse === 'string' ? body.SAMLResponse : '';
        const page = `/app/${tenant.slug}/sso-callback`;
        try {
          const { code, purpose } = await services.saml.consumeResponse(em, tenant, connectionId, samlResponse, metaOf(req));
          res.redirect(303, `${purpose === 'test' ? testPage(tenant.slug, connectionId) : page}#code=${encodeURIComponent(code)}`);
        } catch (err) {
          if (!(err instanceof ApiError) || err.code === 'NOT_FOUND') throw err;
          // a refused answer to an Admin's test is shown on the console's connection page as well
          const target = (await services.saml.isTestRequestOf(em, tenant, connectionId, samlResponse)) ? testPage(tenant.slug, connectionId) : page;
          res.redirect(303, `${target}#error=${encodeURIComponent(String(err.details.reason ?? 'saml_response_invalid'))}`);
        }
      }).catch(next);
    },
  );
  return routes;
}

/** The console page of a connection, where an Admin's test shows its result. */
function testPage(slug: string, connectionId: string): string {
  return `/app/${slug}/admin/sso/${connectionId}`;
}

/** Resolves the live workspace and the connection id of the path, or answers 404. */
async function withConnection(
  services: AppServices, req: Request, res: Response, handle: (em: EntityManager, tenant: Tenant, connectionId: string) => Promise<void>,
): Promise<void> {
  const slug = String(req.params.slug ?? '');
  const connectionId = String(req.params.connectionId ?? '');
  const em = services.orm.em.fork() as EntityManager;
  const resolved = SLUG.test(slug) && UUID.test(connectionId) ? await services.credentials.resolveTenant(em, slug, undefined) : undefined;
  if (!resolved) {
    sendError(res, 'NOT_FOUND', 'SSO connection not found', { reason: 'not_found' });
    return;
  }
  try {
    await handle(em, resolved.tenant, connectionId);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'NOT_FOUND') {
      sendError(res, 'NOT_FOUND', err.message, err.details);
      return;
    }
    throw err;
  }
}

function metaOf(req: Request): RequestMeta {
  const userAgent = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: userAgent ? userAgent.slice(0, 512) : null };
}

