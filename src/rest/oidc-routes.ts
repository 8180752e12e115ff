import type { EntityManager } from '@mikro-orm/postgresql';
import express, { type Request, type Response } from 'express';
import type { AppServices } from '../app-services.js';
import type { Tenant } from '../entities/tenant.js';
import { OIDC_PROVIDER_PER_CLIENT, OIDC_PROVIDER_PER_IP, type RateLimitBudget } from '../services/rate-limits/rate-limit-rules.js';
import { rateLimitClientKey } from '../services/rate-limits/rate-limiter.js';
import { findLiveTenantBySlug } from '../queries/tenant.js';
import { sendApiError } from './error-envelope.js';
import { INTERACTION_PATH } from '../services/oidc/oidc-provider-service.js';
import { TENANT_ERRORS } from '../errors/tenant.js';
import { spendBudget } from '../middleware/rate-limit.js';

/**
 * The provider's own pages (the logout confirmation, errors) post a form to the provider and may
 * style themselves inline; nothing else loads, nothing frames them (OWASP ASVS V3.4). Scripts: none,
 * except the one inline auto-submit script of a `form_post` page (a response to the application,
 * or a logout without a provider session), whose SHA-256 oidc-provider adds to `script-src` (the
 * service then drops the `'none'`, src/services/oidc/oidc-provider-service.ts). No `form-action`:
 * it would also block the redirect after the form to the application's registered post-logout URI
 * (any origin, or a native app's own scheme), and the form_post to its `redirect_uri`, which the
 * provider has already checked.
 */
export const PROVIDER_CSP = "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/** How long relying parties and caches may keep the discovery document and the JWKS (seconds). */
export const PROVIDER_METADATA_MAX_AGE = 300;

/** The provider's metadata documents, under the issuer: Cache-Control `public, max-age` (they are the same for everyone). */
const METADATA_PATHS = new Set(['/.well-known/openid-configuration', '/jwks']);

type TenantResponse = Response<unknown, { tenant: Tenant }>;


/**
 * The client id of a provider request that authenticates its client with HTTP Basic (RFC 6749
 * §2.3.1), read without the body (oidc-provider parses the body itself); a wrong secret is refused
 * by the provider, and still spends that client id's budget.
 */
function clientIdOf(req: Request): string | undefined {
  const basic = /^Basic\s+([A-Za-z0-9+/=]{1,2048})$/i.exec(req.headers.authorization ?? '')?.[1];
  if (basic) {
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      try {
        return decodeURIComponent(decoded.slice(0, colon));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The hand-off procedures (src/routers/oidc-interaction.ts), which the REST façade answers through the
 * procedure pipeline (rate limits, one tenant resolution, the credential): `GET interaction/{uid}/details`
 * and `POST interaction/{uid}/complete`, relative to the router's mount.
 */
const HAND_OFF_PROCEDURES: readonly { method: string; path: RegExp }[] = [
  { method: 'GET', path: new RegExp(`^${INTERACTION_PATH}[^/]+/details/?$`, 'i') },
  { method: 'POST', path: new RegExp(`^${INTERACTION_PATH}[^/]+/complete/?$`, 'i') },
];

/** Whether the request is one of {@link HAND_OFF_PROCEDURES}. */
function isHandOffProcedure(req: Request): boolean {
  return HAND_OFF_PROCEDURES.some((route) => route.method === req.method && route.path.test(req.path));
}

/**
 * `/v1/{tenantSlug}/oidc/*`: the tenant's OpenID Provider (docs/oidc.md). The protocol endpoints
 * (discovery, authorize, token, userinfo, JWKS, introspection, revocation, end session) are
 * oidc-provider's; this router sets the provider's CSP on every answer, adds the rate limits and the
 * tenant look-up (unknown slug: 404 in the envelope), and sends the browser of a pending sign-in to
 * the hosted page (`GET interaction/{uid}` → `/app/{slug}/sign-in?interaction={uid}`). The page's
 * hand-off, `GET interaction/{uid}/details` and `POST interaction/{uid}/complete`, are procedures
 * (src/routers/oidc-interaction.ts): this router passes them on, with the CSP, to the REST façade
 * mounted after it (src/rest/app.ts).
 */
export function oidcRoutes(services: AppServices): express.Router {
  const router = express.Router({ mergeParams: true });
  const em = () => services.orm.em.fork() as EntityManager;

  /** Spends one hit of `budget` (the procedures' rule, src/middleware/rate-limit.ts); @returns false after answering 429 with `Retry-After`. */
  const spend = async (req: Request, res: Response, budget: RateLimitBudget, key: string): Promise<boolean> => {
    const refused = await spendBudget({ services, res, ip: req.ip ?? null }, budget, key);
    if (refused) sendApiError(res, refused);
    return refused === undefined;
  };

  router.use(async (req: Request<{ tenantSlug: string }>, res: TenantResponse, next) => {
    res.setHeader('Content-Security-Policy', PROVIDER_CSP);
    if (isHandOffProcedure(req)) return next('router');
    try {
      // the provider is rate limited like the API (docs/oidc.md "Limits"): a client authenticating with
      // HTTP Basic (a back end: token, introspection, revocation) per client id, anything else per client IP
      const clientId = clientIdOf(req);
      const allowed = clientId !== undefined
        ? await spend(req, res, OIDC_PROVIDER_PER_CLIENT, `${req.params.tenantSlug}:${clientId}`)
        : await spend(req, res, OIDC_PROVIDER_PER_IP, rateLimitClientKey(req.ip ?? null));
      if (!allowed) return;
      const tenant = await findLiveTenantBySlug(em(), req.params.tenantSlug);
      if (!tenant) return sendApiError(res, TENANT_ERRORS.tenantNotFound());
      res.locals.tenant = tenant;
      next();
    } catch (err) {
      next(err);
    }
  });

  router.get('/interaction/:uid', (req: Request<{ tenantSlug: string; uid: string }>, res) => {
    res.redirect(303, `/app/${encodeURIComponent(req.params.tenantSlug)}/sign-in?interaction=${encodeURIComponent(req.params.uid)}`);
  });

  const publicUrl = new URL(services.config.publicUrl);
  router.use(async (req, res: TenantResponse, next) => {
    try {
      const provider = await services.oidc.providerFor(res.locals.tenant);
      // the provider builds its URLs (discovery, form actions, redirects) and judges cookies' Secure
      // from these: PUBLIC_URL's, never the request's Host; the client address is the one Express
      // resolved under TRUST_PROXY
      req.headers['x-forwarded-host'] = publicUrl.host;
      req.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
      req.headers['x-forwarded-for'] = req.ip ?? req.socket.remoteAddress ?? '';
      if (req.method === 'GET' && METADATA_PATHS.has(req.path)) res.setHeader('Cache-Control', `public, max-age=${PROVIDER_METADATA_MAX_AGE}`);
      provider.callback()(req, res);
    } catch (err) {
      next(err);
    }
  });
  return router;
}

/**
 * `GET /.well-known/oauth-authorization-server/v1/{tenantSlug}/oidc`: the tenant's authorization
 * server metadata at the location RFC 8414 §3.1 derives from its issuer (the well-known segment
 * inserted before the issuer's path): the same document as `{issuer}/.well-known/openid-configuration`.
 * @param providerRoutes the router {@link oidcRoutes} built, which answers it.
 */
export function authorizationServerMetadataRoute(providerRoutes: express.Router): express.RequestHandler<{ tenantSlug: string }> {
  return (req, res, next) => {
    const issuerPath = `/v1/${encodeURIComponent(req.params.tenantSlug)}/oidc`;
    req.url = '/.well-known/openid-configuration';
    req.originalUrl = `${issuerPath}${req.url}`;
    providerRoutes(req, res, next);
  };
}
