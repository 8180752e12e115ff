import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { deleteRedisKeys } from '../helpers/redis.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Redis going away under a running instance. The instance reaches the shared Redis through a TCP
 * proxy owned by this test, so the outage is made by closing the proxy, never by touching Redis.
 */
const redisUrl = process.env.TEST_REDIS_URL;
/** The embedded database serves few connections: one per instance there. */
const poolEnv: Record<string, string> = inject('embeddedDatabase') ? { DATABASE_POOL_MAX: '1' } : {};

/** A TCP relay to Redis that can be cut and restored on the same port. */
class RedisRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 6379), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Polls `probe` (every 100 ms, at most 20 s) until `done` holds; returns the last answer. */
async function eventually(probe: () => Promise<ApiResponse>, done: (res: ApiResponse) => boolean): Promise<ApiResponse> {
  let res = await probe();
  for (let i = 0; i < 200 && !done(res); i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    res = await probe();
  }
  return res;
}

const login = (api: Api, slug: string, email: string, password: string) => api.post(`/v1/${slug}/auth/login`, { email, password });

describe.runIf(Boolean(redisUrl))('Redis outage', () => {
  const relay = new RedisRelay(new URL(redisUrl ?? 'redis://127.0.0.1:6379'));
  let server: TestServer;
  let api: Api;
  let tenant: TestTenant;
  const keyPrefix = `idp-test-${unique()}`;

  beforeAll(async () => {
    await relay.start();
    server = await startTestServer({ REDIS_URL: `redis://127.0.0.1:${relay.port}`, REDIS_KEY_PREFIX: keyPrefix, RATE_LIMIT_SCALE: '1', ...poolEnv });
    api = new Api(server.url);
    tenant = await createTenant(api);
  });
  afterAll(async () => {
    await server?.close();
    await relay.stop();
    await deleteRedisKeys(redisUrl!, keyPrefix);
  });

  it('keeps answering with in-process limits while Redis is gone, reports it on /ready, and recovers', async () => {
    const ready = await api.get('/ready');
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
    expect(ready.body.checks.redis).toBe('ok');
    const member = await signupMember(api, tenant.slug);

    await relay.stop();
    const down = await eventually(() => api.get('/ready'), (r) => r.status === 503);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'not_ready', checks: { database: 'ok', queue: 'ok', redis: 'down' } });
    expect(server.logs.some((l) => l.includes('rate limits fall back to in-process counters'))).toBe(true);

    // Requests are still served, and still limited (by this instance's own counters).
    expect((await login(api, tenant.slug, member.email, PASSWORD)).status).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    for (let i = 0; i < 10; i += 1) expectError(await login(api, tenant.slug, member.email, 'wrong'), 401, 'UNAUTHORIZED', 'invalid_credentials');
    const limited = await login(api, tenant.slug, member.email, 'wrong');
    expectError(limited, 429, 'TOO_MANY_REQUESTS', 'rate_limited');
    expect(limited.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);

    await relay.start();
    const back = await eventually(() => api.get('/ready'), (r) => r.status === 200);
    expect(back.body).toEqual({ status: 'ready', checks: { database: 'ok', queue: 'ok', redis: 'ok' } });
    expect(server.logs.some((l) => l.includes('Redis is reachable again'))).toBe(true);
    // Counting is back in Redis, which never saw the outage's failures (the local counter says 429).
    expect((await login(api, tenant.slug, member.email, PASSWORD)).status).toBe(200);
  });

  it('starts and serves when Redis is unreachable from the beginning', async () => {
    const closed = new RedisRelay(new URL(redisUrl!));
    await closed.start();
    const port = closed.port;
    await closed.stop();
    const cut = await startTestServer({ REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_SCALE: '1', ...poolEnv });
    try {
      const cutApi = new Api(cut.url);
      const ready = await cutApi.get('/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks).toEqual({ database: 'ok', queue: 'ok', redis: 'down' });
      expect((await login(cutApi, tenant.slug, `nobody-${unique()}@example.com`, 'x')).status).toBe(401);
      expect(cut.logs.some((l) => l.includes('Redis is unreachable'))).toBe(true);
    } finally {
      await cut.close();
    }
  });
});
