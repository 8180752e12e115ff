import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, RequestHandler, Response } from 'express';
import type { AppServices } from '../app-services.js';
import type { LogoVariant } from '../entities/tenant-logo.js';
import { BRANDING_ERRORS } from '../errors/branding.js';
import { LOGO_VERSION_LENGTH } from '../services/branding/branding.js';
import { sendApiError } from './error-envelope.js';

/** How long browsers and proxies may reuse a logo without asking again, in seconds. */
export const LOGO_MAX_AGE_SECONDS = 300;

const VERSION = new RegExp(`^[0-9a-f]{${LOGO_VERSION_LENGTH}}$`);

/** True when `If-None-Match` names the entity tag `etag` (quoted), or is `*` (RFC 9110 13.1.2, weak comparison). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

/**
 * `GET /v1/{tenantSlug}/branding/logo` and `GET /v1/{tenantSlug}/branding/logo/dark` (public;
 * docs/web.md "Branding"): the workspace's logo (the dark theme's, else the logo) with its content
 * type, a strong `ETag` (SHA-256 of the bytes), `Cache-Control: public, max-age=300` (`no-cache`
 * when `?v=` names another version than the one served),
 * `X-Content-Type-Options: nosniff` and a CSP that lets nothing run; 304 for a matching
 * `If-None-Match`; 404 `not_found` without a logo or a live workspace. Served from the instance's
 * memory (LogoService.find); a `?v=` naming another version than the remembered one reads it again.
 */
export function brandingLogo(services: AppServices, variant: LogoVariant): RequestHandler {
  return async (req: Request, res: Response) => {
    const slug = typeof req.params.slug === 'string' ? req.params.slug : '';
    const version = typeof req.query.v === 'string' && VERSION.test(req.query.v) ? req.query.v : undefined;
    const logo = await services.logos.find(services.orm.em.fork() as EntityManager, slug, variant, version);
    if (!logo) {
      sendApiError(res, BRANDING_ERRORS.logoNotFound());
      return;
    }
    const etag = `"${logo.etag}"`;
    // a link naming another version than the one served (an old link, or a change not read yet) is
    // not cached under that URL, so the version in a URL always names the bytes caches keep for it
    const versionServed = version === undefined || logo.etag.startsWith(version);
    res.set({
      'cache-control': versionServed ? `public, max-age=${LOGO_MAX_AGE_SECONDS}` : 'no-cache',
      etag,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cross-origin-resource-policy': 'cross-origin',
    });
    if (ifNoneMatchHits(req.headers['if-none-match'], etag)) {
      res.status(304).end();
      return;
    }
    res.type(logo.contentType).send(logo.bytes);
  };
}
