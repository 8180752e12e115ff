import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { deleteRedisKeys } from '../helpers/redis.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Three instances of the service on one PostgreSQL database and one Redis, as behind a load
 * balancer. Each run uses its own Redis key prefix so parallel runs never share counters.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const runnable = Boolean(redisUrl) && !inject('embeddedDatabase');
const keyPrefix = `idp-test-${unique()}`;

let instances: TestServer[] = [];
let apis: Api[] = [];
let tenant: TestTenant;
let redis: Redis;

function expectRateLimited(res: ApiResponse): void {
  expectError(res, 429, 'TOO_MANY_REQUESTS', 'rate_limited');
  expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(res.body.details.retryAfterSeconds).toBe(Number(res.headers.get('retry-after')));
}

describe.runIf(runnable)('three instances on one PostgreSQL and one Redis', () => {
  beforeAll(async () => {
    instances = await Promise.all(
      [1, 2, 3].map(() => startTestServer({ REDIS_URL: redisUrl, REDIS_KEY_PREFIX: keyPrefix, RATE_LIMIT_SCALE: '1', TRUST_PROXY: 'true' })),
    );
    apis = instances.map((s) => new Api(s.url));
    redis = new Redis(redisUrl!);
    for (const api of apis) {
      const ready = await api.get('/ready');
      expect(ready.status, JSON.stringify(ready.body)).toBe(200);
      expect(ready.body.checks).toEqual({ database: 'ok', queue: 'ok', redis: 'ok' });
    }
    tenant = await createTenant(apis[0]!);
  });
  afterAll(async () => {
    await Promise.all(instances.map((s) => s.close()));
    await redis?.quit();
    if (runnable) await deleteRedisKeys(redisUrl!, keyPrefix);
  });

  it('shares the login limit: a burst of bad logins spread over the instances gets 429 with Retry-After on every instance', async () => {
    const { email } = await signupMember(apis[0]!, tenant.slug);
    const bad = (i: number) => apis[i % 3]!.post(`/v1/${tenant.slug}/auth/login`, { email, password: 'wrong' }, { headers: { 'x-forwarded-for': '203.0.113.5' } });
    const burst = await Promise.all(Array.from({ length: 15 }, (_, i) => bad(i)));
    expect(burst.filter((r) => r.status === 401)).toHaveLength(10);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(5);
    for (let i = 0; i < 3; i += 1) expectRateLimited(await bad(i));
    expect(await redis.keys(`${keyPrefix}:rl:account_ip:*`)).not.toHaveLength(0);
    // the store holds keyed digests: neither the address nor the email nor the workspace is readable in Redis
    const keys = (await redis.keys(`${keyPrefix}:*`)).join('\n');
    expect(keys).not.toContain('203.0.113.5');
    expect(keys).not.toContain(email);
    expect(keys).not.toContain(tenant.slug);
  });

  it('shares per-IP budgets: 20 signups per hour from one IP, whichever instance serves them', async () => {
    const signup = (i: number) =>
      apis[i % 3]!.post(`/v1/${tenant.slug}/auth/signup`, { email: `m-${unique()}@example.com`, password: PASSWORD }, { headers: { 'x-forwarded-for': '203.0.113.6' } });
    for (let i = 0; i < 20; i += 1) expect((await signup(i)).status).toBe(200);
    for (let i = 0; i < 3; i += 1) expectRateLimited(await signup(i));
  });

  it('detects on one instance the replay of a refresh token rotated on another, and revokes the family everywhere', async () => {
    const member = await signupMember(apis[0]!, tenant.slug);
    const rotated = await apis[0]!.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken });
    expect(rotated.status).toBe(200);
    expectError(await apis[1]!.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken }), 401, 'UNAUTHORIZED', 'refresh_token_reused');
    expectError(await apis[2]!.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: rotated.body.refreshToken }), 401, 'UNAUTHORIZED');
    for (const api of apis) {
      expectError(await api.get(`/v1/${tenant.slug}/me`, { token: rotated.body.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    }
  });

  it('refuses on every instance, at once, a session ended on one', async () => {
    const member = await signupMember(apis[1]!, tenant.slug);
    for (const api of apis) expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    expect((await apis[2]!.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: member.refreshToken })).status).toBe(200);
    for (const api of apis) {
      expectError(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    }
  });

  it('ends every session on every instance after logout-all on one', async () => {
    const member = await signupMember(apis[0]!, tenant.slug);
    const second = await apis[1]!.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(second.status).toBe(200);
    const all = await apis[2]!.post(`/v1/${tenant.slug}/auth/logout-all`, undefined, { token: member.accessToken });
    expect(all.body).toEqual({ ok: true, count: 2 });
    for (const [i, api] of apis.entries()) {
      const token = i % 2 === 0 ? member.accessToken : second.body.accessToken;
      expectError(await api.get(`/v1/${tenant.slug}/me`, { token }), 401, 'UNAUTHORIZED', 'session_revoked');
    }
  });
});
