import type { EntityManager } from '@mikro-orm/postgresql';
import express, { type Request, type Response, type Router } from 'express';
import type { AppServices } from '../app-services.js';
import type { Tenant } from '../entities/tenant.js';
import { ApiError } from '../lib/errors.js';
import type { RequestMeta } from '../lib/request-meta.js';
import type { IdpCallbackParams } from '../services/idp/idp-service.js';
import { MAX_SAML_XML_BYTES } from '../services/sso/saml-xml.js';
import { SSO_ERRORS } from '../errors/sso.js';
import { spendBudget } from '../middleware/rate-limit.js';
import { SIGN_IN_PER_IP } from '../services/rate-limits/rate-limit-rules.js';
import { rateLimitClientKey } from '../services/rate-limits/rate-limiter.js';
import { sendApiError } from './error-envelope.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9-]{1,100}$/;

/**
 * The endpoints each connection's identity provider sends the browser to (docs/sso.md), outside the
 * JSON API because they speak XML, HTML forms and redirects:
 * - `GET /v1/{slug}/sso/{connectionId}/saml/metadata`: the SAML service provider's metadata (XML).
 * - `POST /v1/{slug}/sso/{connectionId}/saml/acs`: the SAML assertion consumer service (HTTP-POST
 *   binding, `application/x-www-form-urlencoded` `SAMLResponse`).
 * - `GET /v1/{slug}/sso/{connectionId}/oidc/callback`: the OpenID Connect redirect URI.
 * The last two answer 303 to the hosted page `/app/{slug}/sso-callback` (an Admin's test: the
 * console's connection page) with `#code=…` (a single-use completion code, in the fragment so it never
 * reaches a server log or a Referer) or `#error=<reason>`. Unknown workspaces and connections are
 * 404 `not_found` (JSON envelope).
 */
export function ssoRoutes(services: AppServices): Router {
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
          const { code, purpose } = await services.saml.consumeResponse({ em, tenant, meta: metaOf(req) }, connectionId, samlResponse);
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
  routes.get('/v1/:slug/sso/:connectionId/oidc/callback', (req, res, next) => {
    withConnection(services, req, res, async (em, tenant, connectionId) => {
      const params = callbackParams(req);
      try {
        const { code, purpose } = await services.oidcConnections.consumeCallback({ em, tenant, meta: metaOf(req) }, connectionId, params);
        res.redirect(303, `${purpose === 'test' ? testPage(tenant.slug, connectionId) : `/app/${tenant.slug}/sso-callback`}#code=${encodeURIComponent(code)}`);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code === 'NOT_FOUND') throw err;
        const test = (await services.oidcConnections.purposeOf(em, tenant, connectionId, params.state)) === 'test';
        res.redirect(303, `${test ? testPage(tenant.slug, connectionId) : `/app/${tenant.slug}/sso-callback`}#error=${encodeURIComponent(String(err.details.reason ?? 'idp_error'))}`);
      }
    }).catch(next);
  });
  return routes;
}

/** The authorization-response parameters of the callback's query (RFC 6749 §4.1.2, RFC 9207 `iss`), each once and bounded. */
function callbackParams(req: Request): IdpCallbackParams {
  const read = (name: string, max: number): string | undefined => {
    const value = req.query[name];
    return typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;
  };
  return { code: read('code', 4096), state: read('state', 1024), error: read('error', 256), error_description: read('error_description', 1024), iss: read('iss', 512) };
}

/** The console page of a connection, where an Admin's test shows its result. */
function testPage(slug: string, connectionId: string): string {
  return `/app/${slug}/admin/sso/${connectionId}`;
}

/** Spends the sign-in budget of the caller's IP (429 answered), then resolves the live workspace and the connection id of the path, or answers 404. */
async function withConnection(
  services: AppServices, req: Request, res: Response, handle: (em: EntityManager, tenant: Tenant, connectionId: string) => Promise<void>,
): Promise<void> {
  // every answer an IdP sends is verified (XML signatures, a token exchange): the sign-in budget per IP bounds the work
  const refused = await spendBudget({ services, res, ip: req.ip ?? null }, SIGN_IN_PER_IP, rateLimitClientKey(req.ip ?? null));
  if (refused) {
    sendApiError(res, refused);
    return;
  }
  const slug = String(req.params.slug ?? '');
  const connectionId = String(req.params.connectionId ?? '');
  const em = services.orm.em.fork() as EntityManager;
  const resolved = SLUG.test(slug) && UUID.test(connectionId) ? await services.credentials.resolveTenant(em, slug, undefined) : undefined;
  if (!resolved) {
    sendApiError(res, SSO_ERRORS.connectionNotFound());
    return;
  }
  try {
    await handle(em, resolved.tenant, connectionId);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'NOT_FOUND') {
      sendApiError(res, err);
      return;
    }
    throw err;
  }
}

function metaOf(req: Request): RequestMeta {
  const userAgent = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: userAgent ? userAgent.slice(0, 512) : null };
}

