import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Response } from 'express';

/**
 * The hosted web pages (docs/web.md): the single-page app built by Vite from `web/` into
 * `dist/web`, and the API reference at `/docs` rendered by Swagger UI from `/v1/openapi.json`.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
/** Repository root, whether this file runs from `src/rest` (tsx, tests) or `dist/src/rest` (npm start). */
const twoUp = path.resolve(here, '../..');
const repoRoot = path.basename(twoUp) === 'dist' ? path.dirname(twoUp) : twoUp;

/** Where `vite build` writes the pages (see web/vite.config.ts). */
export const WEB_BUILD_DIR = path.join(repoRoot, 'dist', 'web');
/** The `/docs` page and its start-up script (own files, not built). */
const DOCS_DIR = path.join(repoRoot, 'web', 'docs');
const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Content-Security-Policy of the pages: only same-origin scripts, styles, fonts and API calls, no
 * inline script, no framing; `data:` images for the TOTP QR code, and `https:` images for people's
 * pictures (the `picture` URL of a user, shown on the account page and in the console, fetched
 * without a referrer; docs/decisions.md "Users").
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

function pageHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('Cache-Control', 'no-store');
}

/**
 * Content-Security-Policy of the pages' own SVG files (the favicon): its inline `<style>` (the
 * colours of the dark scheme, `prefers-color-scheme`) may apply, nothing else may load or run. The
 * API's `default-src 'none'` would drop that style in browsers that apply an image's policy to it,
 * and does drop it when the file is opened on its own.
 */
export const SVG_ASSET_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/**
 * Routes for `/`, `/app/*`, `/assets/*` and `/docs*`. HTML answers `Cache-Control: no-store`;
 * Vite's content-hashed files under `/assets` are `immutable` for a year (SVG ones with {@link SVG_ASSET_CSP}); Swagger UI's files are
 * revalidated (`no-cache`) as their names carry no hash. Without a build (`npm run build:web`)
 * the pages answer 503 with a hint; the API is unaffected.
 */
export function webPages(): express.Router {
  const pages = express.Router();
  const indexHtml = path.join(WEB_BUILD_DIR, 'index.html');

  pages.use(
    '/assets',
    express.static(path.join(WEB_BUILD_DIR, 'assets'), {
      fallthrough: true,
      index: false,
      etag: false,
      setHeaders: (res, file) => {
        res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
        if (file.endsWith('.svg')) res.setHeader('Content-Security-Policy', SVG_ASSET_CSP);
      },
    }),
  );

  const sendFile = (file: string, cache: string) => (_req: express.Request, res: Response) => {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Cache-Control', cache);
    res.sendFile(file);
  };
  pages.get('/docs', (_req, res) => {
    pageHeaders(res);
    res.sendFile(path.join(DOCS_DIR, 'index.html'));
  });
  pages.get('/docs/start.js', sendFile(path.join(DOCS_DIR, 'start.js'), 'no-cache'));
  pages.get('/docs/theme.js', sendFile(path.join(DOCS_DIR, 'theme.js'), 'no-cache'));
  pages.get('/docs/docs.css', sendFile(path.join(DOCS_DIR, 'docs.css'), 'no-cache'));
  pages.get('/docs/swagger-ui.css', sendFile(path.join(SWAGGER_UI_DIR, 'swagger-ui.css'), 'no-cache'));
  pages.get('/docs/swagger-ui-bundle.js', sendFile(path.join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'), 'no-cache'));

  pages.get(['/', '/app', '/app/*rest'], (_req, res) => {
    pageHeaders(res);
    if (!existsSync(indexHtml)) {
      res.status(503).type('text/plain').send('The web pages are not built: run `npm run build:web` (npm start does it).');
      return;
    }
    res.sendFile(indexHtml);
  });
  return pages;
}
