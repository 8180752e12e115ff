import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.js';

/** The repository (or installed package) root: two levels above this file in src/ or dist/src/. */
function packageRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.basename(path.dirname(here)) === 'dist' ? path.resolve(here, '../..') : path.resolve(here, '..');
}

/** PostgreSQL server and database of a connection URL, without user or password. */
function describeDatabase(config: Config): string {
  if (!config.databaseUrl) return `embedded PostgreSQL (PGlite) in ${path.join(config.dataDir, 'pgdata')} — set DATABASE_URL for a server`;
  const url = new URL(config.databaseUrl);
  return `PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

function describeMail(config: Config): string {
  if (!config.smtpUrl) return `development outbox: mails are written to ${path.join(config.dataDir, 'outbox')} — set SMTP_URL to send them`;
  const url = new URL(config.smtpUrl);
  return `SMTP via ${url.hostname}:${url.port || (url.protocol === 'smtps:' ? '465' : '587')}, from ${config.mailFrom}`;
}

/**
 * The address a person should open: `PUBLIC_URL`, since passkeys are bound to its host and mailed
 * links point at it (a passkey made on `127.0.0.1` fails on `localhost` and the reverse); the
 * listener's own address only when the public URL names port 0 (`PORT=0` without `PUBLIC_URL`).
 */
function addressForPeople(config: Config, listenerUrl: string): string {
  return new URL(config.publicUrl).port === '0' ? listenerUrl : config.publicUrl;
}

/**
 * The lines `npm start` prints once the service listens: where it answers, the pages (when the web
 * front end is present), the API reference, the database and mail modes, and a first command to try,
 * all at the public URL (see addressForPeople).
 * Never includes a secret (the database and SMTP URLs are reduced to host, port and database).
 * @param url the base URL the listener answers on (e.g. `http://127.0.0.1:3000`).
 */
export function startupSummary(config: Config, url: string): string[] {
  const base = addressForPeople(config, url);
  const lines = [`Tenant Identity listening on ${url} (public URL ${config.publicUrl})`];
  if (existsSync(path.join(packageRoot(), 'web'))) lines.push(`Pages: ${base}/ (sign-in), ${base}/docs (API reference), ${base}/app/{workspace}/sign-in (a workspace's own)`);
  lines.push(`API reference: ${base}/v1/openapi.json (OpenAPI 3.1)`, `Database: ${describeDatabase(config)}`, `Mail: ${describeMail(config)}`);
  lines.push(
    'First command (the README walk-through goes on from it) — create a workspace and its admin:',
    `  curl -s -X POST ${base}/v1/tenants -H 'content-type: application/json' ` +
      `-d '{"tenant":{"name":"Acme Inc"},"admin":{"email":"owner@acme.test","password":"correct horse battery staple"}}'`,
  );
  return lines;
}
