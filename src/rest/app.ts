import { brandingLogo } from './branding-logo.js';
import { LOGO_MAX_BODY_BYTES } from '../services/branding/logo-service.js';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { createOpenApiExpressMiddleware } from 'trpc-to-openapi';
import type { AppServices } from '../app-services.js';
import { appRouter } from '../routers/index.js';
import { STREAMED_BODY_LOCAL } from '../routers/users.js';
import { INTERACTION_COMPLETE_MAX_BODY_BYTES } from '../routers/oidc-interaction.js';
import { createRequestContext } from '../context.js';
import { isDependencyOutage, serviceUnavailable, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../lib/outage.js';
import { envelopeAdapterErrors, sendApiError } from './error-envelope.js';
import { REQUEST_ERRORS } from '../lib/errors.js';
import { MAX_BODY_BYTES, SSO_CONNECTION_MAX_BODY_BYTES, USER_IMPORT_MAX_BODY_BYTES, publicDescriptionCors, screenRequestInput, strictCors } from './http-hardening.js';
import { idpCallbackToPage } from '../middleware/idp-binding-cookie.js';
import { ssoRoutes } from './sso-routes.js';
import { buildOpenApiDocument } from './openapi.js';
import { logRequests } from './request-log.js';
import { authorizationServerMetadataRoute, oidcRoutes } from './oidc-routes.js';
import { countRequests } from './request-metrics.js';
import { webPages } from './web-pages.js';


const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A bodyless POST/PUT/PATCH/DELETE (e.g. `auth/logout-all`) is treated as `{}`; a body that is not
 * JSON is refused with 400 before it reaches a procedure.
 */
function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!BODY_METHODS.has(req.method) || req.body !== undefined) return next();
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (hasBody) {
    return sendApiError(res, REQUEST_ERRORS.jsonRequired());
  }
  req.headers['content-type'] = 'application/json';
  req.body = {};
  next();
}

/**
 * POST users/import-jobs with `Content-Type: application/x-ndjson` (runs after the JSON parser, which
 * leaves that type alone): the body stays an unread stream for the procedure (marked in
 * `res.locals`), and the façade sees an empty JSON object as its input.
 */
function leaveNdjsonBodyUnread(req: Request, res: Response, next: NextFunction): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-ndjson') {
    res.locals[STREAMED_BODY_LOCAL] = true;
    req.headers['content-type'] = 'application/json';
    req.body = {};
  }
  next();
}

/**
 * helmet's headers for an API that serves only JSON: nothing may load, frame or submit anything
 * (OWASP ASVS V3.4). They do not depend on the request, so helmet runs once at start-up against a
 * recording response and every request gets the recorded headers in one `setHeaders` call.
 */
function securityHeaders(): express.RequestHandler {
  const setHelmetHeaders = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], baseUri: ["'none'"], objectSrc: ["'none'"], frameAncestors: ["'none'"], formAction: ["'none'"] },
    },
    frameguard: { action: 'deny' },
    strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true },
  });
  const headers = new Map<string, string>();
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => headers.set(name, value),
    removeHeader: (name: string) => removed.push(name),
  };
  let completed = false;
  setHelmetHeaders({} as never, recorder as never, () => (completed = true));
  if (!completed) throw new Error('helmet did not complete synchronously');
  return (_req, res, next) => {
    res.setHeaders(headers);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}

/**
 * Runs `handler` only for a request whose method may carry a body (POST, PUT, PATCH, DELETE): the
 * routes that choose a body's parser and limit are not matched against every GET
 * (docs/performance.md "The request path, second pass").
 */
function withBodyOnly(handler: express.RequestHandler): express.RequestHandler {
  return (req, res, next) => (BODY_METHODS.has(req.method) ? handler(req, res, next) : next());
}

/** Runs `handler` only outside the API's paths (`/v1/…`, `/trpc/…`): the hosted pages, `/docs`, `/assets`. */
function outsideApi(handler: express.RequestHandler): express.RequestHandler {
  return (req, res, next) => (req.path.startsWith('/v1/') || req.path.startsWith('/trpc/') ? next() : handler(req, res, next));
}

/** Every answer after the health, readiness and OpenAPI routes is never cached (tokens, personal data). */
function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  next();
}

/**
 * Maps body-parser failures, dependency outages (503 with `Retry-After`) and anything unexpected to
 * the envelope; never leaks a stack or SQL.
 */
function errorHandler(services: AppServices) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const type = typeof err === 'object' && err !== null ? (err as { type?: unknown }).type : undefined;
    if (type === 'entity.parse.failed') return sendApiError(res, REQUEST_ERRORS.malformedJson());
    if (type === 'entity.too.large') {
      const limit = (err as { limit?: unknown }).limit;
      return sendApiError(res, REQUEST_ERRORS.bodyTooLarge({ limitBytes: typeof limit === 'number' ? limit : MAX_BODY_BYTES }));
    }
    if (type === 'encoding.unsupported' || type === 'charset.unsupported' || type === 'request.size.invalid' || type === 'request.aborted') {
      return sendApiError(res, REQUEST_ERRORS.unreadableBody());
    }
    const status = typeof err === 'object' && err !== null ? (err as { status?: unknown }).status : undefined;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Any other client-side body failure of the parser (e.g. a Content-Encoding that does not decode).
      return sendApiError(res, REQUEST_ERRORS.unreadableBody());
    }
    if (isDependencyOutage(err)) {
      services.logger.warn({ err, method: req.method, path: req.path }, 'dependency unavailable; answered 503');
      if (!res.headersSent) res.setHeader('Retry-After', String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS));
      return sendApiError(res, serviceUnavailable());
    }
    services.logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
    sendApiError(res, REQUEST_ERRORS.internal());
  };
}

/**
 * The HTTP application: `/health`, `/ready`, `/v1/openapi.json`, the typed tRPC endpoint at `/trpc`,
 * and the REST façade (/v1/…) generated from the same procedures.
 */
export function createApp(services: AppServices): express.Express {
  const { config, logger } = services;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);
  app.use(logRequests(logger));
  if (services.metrics) app.use(countRequests(services.metrics));
  app.use(securityHeaders());
  // The API description is public and holds no secret: documentation tools on any origin may read it.
  const openApiDocument = JSON.stringify(buildOpenApiDocument(config.publicUrl));
  app.options('/v1/openapi.json', publicDescriptionCors);
  app.get('/v1/openapi.json', publicDescriptionCors, (_req, res) => {
    res.type('application/json').send(openApiDocument);
  });
  // Each tenant's OpenID Provider: its own CORS (per client), CSP, caching and body parsing (docs/oidc.md);
  // the hand-off to the hosted sign-in page (interaction/{uid}/details and /complete) goes on, with the
  // provider's CSP, to the REST façade below: they are procedures (src/routers/oidc-interaction.ts).
  const providerRoutes = oidcRoutes(services);
  app.use('/v1/:tenantSlug/oidc', providerRoutes);
  app.get('/.well-known/oauth-authorization-server/v1/:tenantSlug/oidc', authorizationServerMetadataRoute(providerRoutes));
  app.use(strictCors(config.corsOrigins));

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/ready', async (_req, res) => {
    const checks: Record<string, 'ok' | 'down'> = {};
    await Promise.all(
      [...services.readiness].map(async ([name, check]) => {
        checks[name] = await check().then(() => 'ok' as const, () => 'down' as const);
      }),
    );
    const ready = Object.values(checks).every((c) => c === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });

  // The hosted pages and /docs set their own CSP and caching (src/rest/web-pages.ts); no API path is theirs.
  app.use(outsideApi(webPages()));

  // A workspace's logo caches for a while (its URL carries its version); everything below is no-store.
  app.get('/v1/:slug/branding/logo', brandingLogo(services, 'light'));
  app.get('/v1/:slug/branding/logo/dark', brandingLogo(services, 'dark'));
  app.use(noStore);
  // A provider sign-in the hosted pages started returns to its page (docs/web.md); API clients are unaffected.
  app.get('/v1/:slug/oauth/idp/callback', idpCallbackToPage);
  // SSO connections' IdPs speak XML, forms and redirects: SAML metadata and ACS, the OpenID Connect callback (docs/sso.md).
  app.use(ssoRoutes(services));
  // Bodies larger than the common limit, route by route; only a request that may carry a body looks them up.
  const largerBodies = express.Router();
  // An import of 1,000 users with their hashes needs more room than any other body (docs/import.md).
  largerBodies.post('/v1/:slug/users/import', express.json({ limit: USER_IMPORT_MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] }));
  // An identity provider's SAML metadata may be larger than the common limit (docs/sso.md), on REST and on /trpc.
  const ssoConnectionBody = express.json({ limit: SSO_CONNECTION_MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] });
  largerBodies.post('/v1/:slug/sso-connections', ssoConnectionBody);
  largerBodies.patch('/v1/:slug/sso-connections/:id', ssoConnectionBody);
  largerBodies.post(['/trpc/sso.create', '/trpc/sso.update'], ssoConnectionBody);
  // A logo of up to 256 KiB travels as base64 (docs/web.md "Branding"): only its routes take bodies that large.
  const logoBody = express.json({ limit: LOGO_MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] });
  largerBodies.put(['/v1/:slug/tenant/logo', '/v1/:slug/tenant/logo/dark'], logoBody);
  largerBodies.post(['/trpc/tenant.setLogo', '/trpc/tenant.setDarkLogo'], logoBody);
  // Finishing an OpenID Provider sign-in (passed on by the provider's mount above) takes a refresh token and an organization id.
  largerBodies.post('/v1/:slug/oidc/interaction/:uid/complete', express.json({ limit: INTERACTION_COMPLETE_MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] }));
  app.use(withBodyOnly(largerBodies));
  app.use(express.json({ limit: MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] }));
  // An import job's NDJSON body (not parsed above) is left unread: the procedure streams it into the job (docs/import.md).
  app.use(withBodyOnly(express.Router().post('/v1/:slug/users/import-jobs', leaveNdjsonBodyUnread)));
  app.use(requireJsonBody);
  app.use(screenRequestInput);

  const createContext = ({ req, res }: { req: Request; res: Response }) => createRequestContext(services, req, res);
  const onError = ({ error, path }: { error: { code: string; message: string; cause?: unknown }; path?: string }) => {
    if (error.code === 'INTERNAL_SERVER_ERROR') logger.error({ err: error.cause ?? error, path }, 'procedure failed');
  };

  app.use('/trpc', createExpressMiddleware({ router: appRouter, createContext, onError }));
  app.use(envelopeAdapterErrors);
  app.use(
    createOpenApiExpressMiddleware({ router: appRouter, createContext, onError, maxBodySize: MAX_BODY_BYTES }) as express.RequestHandler,
  );
  app.use(errorHandler(services));
  return app;
}
