import type { EntityManager } from '@mikro-orm/postgresql';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppServices } from '../app-services.js';
import type { Tenant } from '../entities/tenant.js';
import { ApiError, REQUEST_ERRORS } from '../lib/errors.js';
import { isUuid } from '../lib/uuid.js';
import { OIDC_PROVIDER_PER_CLIENT, OIDC_PROVIDER_PER_IP, PER_CREDENTIAL, type RateLimitBudget } from '../services/rate-limits/rate-limit-rules.js';
import { rateLimitClientKey } from '../services/rate-limits/rate-limiter.js';
import { findLiveTenantBySlug } from '../queries/tenant.js';
import { sendApiError } from './error-envelope.js';
import { TENANT_ERRORS } from '../errors/tenant.js';
import { spendBudget } from '../middleware/rate-limit.js';
import { readSessionBindingCookie } from '../middleware/refresh-cookie.js';
import { isSessionBinding } from '../security/session-binding.js';
import { OIDC_ERRORS } from '../errors/oidc.js';
import { SESSION_ERRORS } from '../errors/session.js';

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

/** Answers a catalog error as the envelope; passes anything else on to the error handler. */
function answerOrPass(res: Response, err: unknown, next: NextFunction): void {
  if (err instanceof ApiError) {
    sendApiError(res, err);
    return;
  }
  next(err);
}

/**
 * `/v1/{tenantSlug}/oidc/*`: the tenant's OpenID Provider (docs/oidc.md). The protocol endpoints
 * (discovery, authorize, token, userinfo, JWKS, introspection, revocation, end session) are
 * oidc-provider's; this router adds the tenant look-up (unknown slug: 404 in the envelope) and the
 * hand-off to the hosted sign-in page:
 * - `GET interaction/{uid}`: sends the browser to `/app/{slug}/sign-in?interaction={uid}`;
 * - `GET interaction/{uid}/details`: the application's name and whether it asked for a new sign-in;
 * - `POST interaction/{uid}/complete` (bearer access token of the hosted session; body
 *   `{refreshToken?, organizationId?}`): finishes the sign-in, with the organization the person
 *   picked when the application asked for `organizations`, and answers `{redirectTo}`.
 * The interaction endpoints read the provider's interaction cookie, scoped to their path, so only
 * the browser that started the sign-in can finish it.
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

  router.get('/interaction/:uid/details', async (req, res: TenantResponse, next) => {
    try {
      res.setHeader('Cache-Control', 'no-store');
      res.json(await services.oidc.interactionInfo(res.locals.tenant, req, res));
    } catch (err) {
      answerOrPass(res, err, next);
    }
  });

  /**
   * An access token alone never finishes a provider sign-in (docs/oidc.md "Sessions end everywhere"):
   * the browser's session-binding cookie (set beside the hosted pages' refresh cookie) or, for a
   * client without the pages, the session's current refresh token in the body (`{refreshToken}`).
   * @throws ApiError 401 `session_proof_required`.
   */
  const requireSessionProof = async (req: Request, tenant: Tenant, sessionId: string): Promise<void> => {
    if (isSessionBinding(services.config.jwtSecret, tenant.slug, sessionId, readSessionBindingCookie(req, tenant.slug))) return;
    const presented = (req.body as { refreshToken?: unknown } | undefined)?.refreshToken;
    if (typeof presented === 'string' && presented.length <= 512 && (await services.sessions.holdsCurrentRefreshToken(em(), tenant.id, sessionId, presented))) return;
    throw OIDC_ERRORS.sessionProofRequired();
  };

  router.post('/interaction/:uid/complete', express.json({ limit: '4kb' }), async (req, res: TenantResponse, next) => {
    try {
      res.setHeader('Cache-Control', 'no-store');
      const tenant = res.locals.tenant;
      const authorization = req.headers.authorization;
      const resolved = await services.credentials.resolveTenant(em(), tenant.slug, authorization);
      const principal = await services.credentials.authenticate(em(), tenant, authorization, resolved?.sessionCheck);
      if (principal.kind !== 'user') throw SESSION_ERRORS.userTokenRequiredToFinishSignIn();
      if (!(await spend(req, res, PER_CREDENTIAL, `session:${principal.sessionId}`))) return;
      await requireSessionProof(req, tenant, principal.sessionId);
      const session = await services.sessions.authenticationOf(em(), tenant.id, principal.sessionId);
      if (!session) throw SESSION_ERRORS.sessionRevoked();
      const meta = { ip: req.ip ?? null, userAgent: req.headers['user-agent']?.slice(0, 512) ?? null };
      const picked = (req.body as { organizationId?: unknown } | undefined)?.organizationId;
      if (picked !== undefined && (typeof picked !== 'string' || !isUuid(picked))) throw REQUEST_ERRORS.validationFailed({ issues: [{ path: 'organizationId', message: 'Must be an organization id' }] });
      const redirectTo = await services.oidc.completeInteraction(
        tenant,
        { userId: principal.userId, sessionId: principal.sessionId, authenticatedAt: session.authenticatedAt, method: session.method },
        req,
        res,
        meta,
        picked,
      );
      res.json({ redirectTo });
    } catch (err) {
      answerOrPass(res, err, next);
    }
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
