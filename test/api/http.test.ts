import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTenant(suite.api);
});

describe('service endpoints', () => {
  it('GET /health answers ok', async () => {
    const res = await suite.api.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /ready answers ready when the database answers', async () => {
    const res = await suite.api.get('/ready');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ready');
    expect(res.body.checks.database).toBe('ok');
  });

  it('GET /v1/openapi.json describes every route with schemas, version 0.0.0', async () => {
    const res = await suite.api.get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(res.body.info.version).toBe('0.0.0');
    const expected: [string, string][] = [
      ['/v1/tenants', 'post'],
      ['/v1/{tenantSlug}/auth/login', 'post'],
      ['/v1/{tenantSlug}/auth/signup', 'post'],
      ['/v1/{tenantSlug}/auth/refresh', 'post'],
      ['/v1/{tenantSlug}/auth/logout', 'post'],
      ['/v1/{tenantSlug}/auth/logout-all', 'post'],
      ['/v1/{tenantSlug}/me', 'get'],
      ['/v1/{tenantSlug}/me', 'delete'],
      ['/v1/{tenantSlug}/me/password', 'patch'],
      ['/health', 'get'],
      ['/ready', 'get'],
      ['/v1/openapi.json', 'get'],
    ];
    for (const [path, method] of expected) {
      const op = res.body.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.responses['200'], `${method} ${path} 200`).toBeDefined();
    }
    const login = res.body.paths['/v1/{tenantSlug}/auth/login'].post;
    const schema = login.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['email', 'password']));
    expect(schema.properties.password.maxLength).toBe(1024);
  });
});

describe('error envelope on every path', () => {
  it('unknown routes answer the 404 envelope', async () => {
    expectError(await suite.api.get('/nope'), 404, 'NOT_FOUND');
    expectError(await suite.api.get('/v1/some-tenant/unknown-route'), 404, 'NOT_FOUND');
    expectError(await suite.api.post('/v1/x/y/z', {}), 404, 'NOT_FOUND');
  });

  it('malformed JSON answers 400 malformed_json', async () => {
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/login`, undefined, { raw: '{"email": "a@b.co", ' });
    expectError(res, 400, 'BAD_REQUEST', 'malformed_json');
  });

  it('a non-JSON body answers 400', async () => {
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/login`, undefined, { raw: 'email=a@b.co', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(res, 400, 'BAD_REQUEST');
  });

  it('a body over 100 KiB answers 413 in the envelope', async () => {
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: 'a@b.co', password: 'x'.repeat(200_000) });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it.each([
    ['null', 'null'],
    ['array', '[1,2]'],
    ['string', '"text"'],
    ['number', '42'],
    ['nested garbage', '{"email":{"$gt":""},"password":["x"]}'],
    ['unicode', '{"email":"\\u0000@\\ud800.com","password":"\\u202e"}'],
  ])('a %s body never gives a 5xx', async (_l, raw) => {
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/login`, undefined, { raw });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'message']);
  });

  it('never shows a stack trace or SQL', async () => {
    const res = await suite.api.post('/v1/tenants', undefined, { raw: '{"name":' });
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts|select |insert |stack/i);
  });
});

describe('typed tRPC endpoint', () => {
  it('serves the same procedures at /trpc', async () => {
    const input = encodeURIComponent(JSON.stringify({ tenantSlug: tenant.slug }));
    const res = await suite.api.get(`/trpc/me.get?input=${input}`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.result.data.id).toBe(tenant.adminId);
    const denied = await suite.api.get(`/trpc/me.get?input=${input}`);
    expect(denied.status).toBe(401);
    expect(denied.body.error.data.details.reason).toBe('missing_credential');
  });
});
