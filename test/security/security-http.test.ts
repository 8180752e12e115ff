import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { MAX_BODY_BYTES } from '../../src/rest/http-hardening.js';
import { Api, createTenant, PASSWORD, type TestTenant, unique } from '../helpers/api.js';
import { expectEnvelope, send } from '../helpers/principals.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** HTTP hardening (OWASP ASVS V3 web frontend security, V4 API, V13 configuration). */

const APP_ORIGIN = 'https://app.example.com';
const OTHER_ALLOWED = 'http://localhost:5173';

let server: TestServer;
let api: Api;
let tenant: TestTenant;

beforeAll(async () => {
  server = await startTestServer({ CORS_ORIGINS: `${APP_ORIGIN}, ${OTHER_ALLOWED}` });
  api = new Api(server.url);
  tenant = await createTenant(api);
});
afterAll(async () => {
  await server.close();
});

/** Writes raw bytes on a fresh connection and returns everything the server answers before closing. */
function rawExchange(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(request);
  });
}

describe('security headers', () => {
  it.each(['/health', '/v1/openapi.json', '/v1/no-such-tenant-route/me'])('sets helmet headers on %s', async (path) => {
    const res = await send(server.url, 'GET', path);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const hsts = res.headers.get('strict-transport-security') ?? '';
    expect(Number(/max-age=(\d+)/.exec(hsts)?.[1])).toBeGreaterThanOrEqual(31_536_000);
    expect(hsts).toContain('includeSubDomains');
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "base-uri 'none'", "object-src 'none'", "frame-ancestors 'none'"]) expect(csp).toContain(directive);
    expect(res.headers.get('content-type')).toMatch(/^application\/json; charset=utf-8$/i);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('does not support TRACE (nor any method the API does not use)', async () => {
    for (const method of ['TRACE', 'CONNECT']) {
      const res = await rawExchange(server.port, `${method} /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(res).not.toMatch(/^HTTP\/1\.1 2/);
    }
    const put = await send(server.url, 'PUT', '/health');
    expect(put.status).toBe(404);
    expectEnvelope(put, 'PUT /health');
  });

  it('marks every token response and every error Cache-Control: no-store (RFC 6749 §5.1)', async () => {
    const email = `c-${unique()}@example.com`;
    const signup = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/signup`, { body: { email, password: PASSWORD } });
    const login = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/login`, { body: { email, password: PASSWORD } });
    const refresh = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/refresh`, { body: { refreshToken: login.json.refreshToken } });
    const refused = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/login`, { body: { email, password: 'wrong password' } });
    for (const res of [signup, login, refresh, refused]) {
      expect(res.status === 200 || res.status === 401).toBe(true);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-type')).toMatch(/^application\/json; charset=utf-8$/i);
    }
  });
});

describe('request body limit', () => {
  it(`refuses a body over ${MAX_BODY_BYTES} bytes with 413 in the envelope`, async () => {
    const body = JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(MAX_BODY_BYTES) });
    const res = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/login`, { body });
    expect(res.status).toBe(413);
    expectEnvelope(res, 'oversized body');
    expect(res.json.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('reads a body just under the limit (then validates it)', async () => {
    const filler = 'x'.repeat(MAX_BODY_BYTES - 200);
    const res = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/login`, { body: { email: 'a@b.co', password: 'p', filler } });
    expect(res.status).toBe(401);
    expectEnvelope(res, 'body under the limit');
  });
});

describe('CORS (CORS_ORIGINS)', () => {
  const preflight = (origin: string, method = 'POST') =>
    send(server.url, 'OPTIONS', `/v1/${tenant.slug}/auth/login`, {
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
    });

  it.each([APP_ORIGIN, OTHER_ALLOWED])('answers the preflight of allowed origin %s, echoing it, without credentials', async (origin) => {
    const res = await preflight(origin);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/origin/i);
  });

  it.each(['https://evil.example', 'https://app.example.com.evil.example', 'http://app.example.com', 'null'])(
    'refuses the preflight of origin %s with 403 and no CORS headers',
    async (origin) => {
      const res = await preflight(origin);
      expect(res.status).toBe(403);
      expectEnvelope(res, 'refused preflight');
      expect(res.json.details.reason).toBe('origin_not_allowed');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    },
  );

  it('adds Access-Control-Allow-Origin to actual requests of allowed origins only, never *', async () => {
    const allowed = await send(server.url, 'GET', `/v1/${tenant.slug}/me`, { token: tenant.accessToken, headers: { origin: APP_ORIGIN } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const refused = await send(server.url, 'GET', `/v1/${tenant.slug}/me`, { token: tenant.accessToken, headers: { origin: 'https://evil.example' } });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const noOrigin = await send(server.url, 'GET', '/health');
    expect(noOrigin.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows no cross-origin access when CORS_ORIGINS is empty (the default)', async () => {
    const closed = await startTestServer();
    try {
      const res = await send(closed.url, 'OPTIONS', '/v1/tenants', { headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST' } });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await closed.close();
    }
  });

  it.each(['*', 'https://app.example.com/path', 'app.example.com', 'ftp://files.example.com', 'https://*.example.com'])(
    'refuses CORS_ORIGINS entry %s at start-up',
    (entry) => {
      expect(() => loadConfig({ NODE_ENV: 'test', JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEYS: `v1:${Buffer.alloc(32).toString('base64')}`, CORS_ORIGINS: entry })).toThrow(ConfigError);
    },
  );
});

describe('unreadable HTTP', () => {
  it('answers a malformed request line with a 400 envelope', async () => {
    const answer = await rawExchange(server.port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ code: 'BAD_REQUEST', message: expect.any(String), details: { reason: 'malformed_http' } });
  });

  it('answers oversized headers with a 400 envelope', async () => {
    const answer = await rawExchange(server.port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).details.reason).toBe('headers_too_large');
  });

  it('answers a broken chunked body with a 400 envelope', async () => {
    const answer = await rawExchange(
      server.port,
      `POST /v1/${tenant.slug}/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code).toBe('BAD_REQUEST');
  });
});
