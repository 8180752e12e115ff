import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request, RequestHandler, Response } from 'express';
import type { AppServices } from '../app-services.js';
import { BRANDING_ERRORS } from '../services/branding/branding-errors.js';
import { sendApiError } from './error-envelope.js';

/** How long browsers and proxies may reuse a logo without asking again, in seconds. */
export const LOGO_MAX_AGE_SECONDS = 300;

/**
 * `GET /v1/{tenantSlug}/branding/logo` (public; docs/web.md "Branding"): the workspace's logo with
 * its content type, a strong `ETag` (SHA-256 of the bytes), `Cache-Control: public, max-age=300`,
 * `X-Content-Type-Options: nosniff` and a CSP that lets nothing run; 304 for a matching
 * `If-None-Match`; 404 `not_found` without a logo or a live workspace.
 */
export function brandingLogo(services: AppServices): RequestHandler {
  return async (req: Request, res: Response) => {
    const slug = typeof req.params.slug === 'string' ? req.params.slug : '';
    const logo = await services.logos.find(services.orm.em.fork() as EntityManager, slug);
    if (!logo) {
      sendApiError(res, BRANDING_ERRORS.logoNotFound());
      return;
    }
    const etag = `"${logo.etag}"`;
    res.set({
      'cache-control': `public, max-age=${LOGO_MAX_AGE_SECONDS}`,
      etag,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cross-origin-resource-policy': 'cross-origin',
    });
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
      res.status(304).end();
      return;
    }
    res.type(logo.contentType).send(logo.bytes);
  };
}
