import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, PASSWORD, type TestTenant } from '../helpers/api.js';
import { closedPort, eventually } from '../helpers/polling.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Prometheus metrics (docs/operations.md "Metrics"): off by default; with `METRICS_ENABLED` on their
 * own port, never on the API port; requests by route pattern (never a raw path), job and webhook
 * outcomes, queue depth, pool use and rate-limit fallbacks while Redis is down.
 */
const scrape = async (server: TestServer) => {
  const res = await fetch(server.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
};

/** The value of one sample line, e.g. `idp_jobs_total{kind="webhook.deliver",outcome="completed"}`. */
const sample = (text: string, line: string): number | undefined => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
};

describe('metrics off by default', () => {
  it('serves no metrics listener and no /metrics route on the API port', async () => {
    const server = await startTestServer();
    try {
      expect(server.metricsUrl).toBeUndefined();
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('metrics with METRICS_ENABLED', () => {
  let server: TestServer;
  let api: Api;
  let tenant: TestTenant;
  let receiver: http.Server;

  beforeAll(async () => {
    // Redis is configured but down: limits run on in-process counters, which the metrics count.
    server = await startTestServer({
      METRICS_ENABLED: 'true', METRICS_PORT: '0', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    });
    api = new Api(server.url);
    tenant = await createTenant(api);
    receiver = http.createServer((req, res) => {
      req.resume();
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('is served on its own port only', async () => {
    expect(new URL(server.metricsUrl!).port).not.toBe(new URL(server.url).port);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(server.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404);
  });

  it('counts requests by route pattern, method, transport and status, never by raw path', async () => {
    const before = sample(await scrape(server), 'idp_http_requests_total{route="me.get",method="GET",transport="rest",status="200"}') ?? 0;
    for (let i = 0; i < 3; i++) expect((await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken })).status).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`)).status).toBe(401);
    expect((await api.get(`/v1/no-such-${tenant.slug}/nothing/${'x'.repeat(20)}`)).status).toBe(404);
    const text = await scrape(server);
    expect(sample(text, 'idp_http_requests_total{route="me.get",method="GET",transport="rest",status="200"}')).toBe(before + 3);
    expect(sample(text, 'idp_http_requests_total{route="me.get",method="GET",transport="rest",status="401"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/idp_http_request_duration_seconds_bucket\{le="0\.1",route="me\.get",method="GET",transport="rest",status="200"\}/);
    expect(text).toContain('route="unmatched"');
    expect(text).not.toContain(tenant.slug);
  });

  it('labels a request refused before its procedure ran by that procedure, and the provider\'s endpoints by name', async () => {
    const line = 'idp_http_requests_total{route="auth.login",method="POST",transport="rest",status="400"}';
    const before = sample(await scrape(server), line) ?? 0;
    const malformed = await fetch(`${server.url}/v1/${tenant.slug}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' });
    expect(malformed.status).toBe(400);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/oidc/.well-known/openid-configuration`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/${tenant.slug}/oidc/token`, { method: 'POST' })).status).toBe(400);
    const text = await scrape(server);
    expect(sample(text, line)).toBe(before + 1);
    expect(sample(text, 'idp_http_requests_total{route="oidc.discovery",method="GET",transport="rest",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'idp_http_requests_total{route="oidc.token",method="POST",transport="rest",status="400"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(tenant.slug);
  });

  it('shows the requests in flight, the pool\'s maximum and the age of the oldest due job', async () => {
    const text = await scrape(server);
    // the scrape goes to the metrics listener: no API request is in flight while it is answered
    expect(sample(text, 'idp_http_requests_in_flight')).toBe(0);
    expect(sample(text, 'idp_db_pool_connections{state="max"}')).toBe(Number(server.services.config.databasePoolMax));
    expect(sample(text, 'idp_job_queue_oldest_due_seconds')).toBeGreaterThanOrEqual(0);
  });

  it('shows job outcomes, webhook deliveries, queue depth and pool use', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const created = await api.post(`/v1/${tenant.slug}/webhooks`, { url }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await api.post(`/v1/${tenant.slug}/webhooks/${created.body.webhook.id}/test`, {}, { token: tenant.accessToken })).status).toBe(200);
    // The delivery is counted when the POST succeeded, its job a moment later when the job is marked
    // completed: wait for both.
    const text = await eventually(async () => {
      const t = await scrape(server);
      const delivered = (sample(t, 'idp_webhook_deliveries_total{outcome="succeeded"}') ?? 0) >= 1;
      const completed = (sample(t, 'idp_jobs_total{kind="webhook.deliver",outcome="completed"}') ?? 0) >= 1;
      return delivered && completed ? t : undefined;
    }, 'a counted webhook delivery and its completed job');
    expect(sample(text, 'idp_jobs_total{kind="webhook.deliver",outcome="completed"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'idp_job_queue_jobs{state="pending"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'idp_job_queue_jobs{state="failed"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'idp_db_pool_connections{state="used"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'idp_db_pool_connections{state="free"}')).toBeGreaterThanOrEqual(0);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('counts rate-limit decisions taken on in-process counters while Redis is down', async () => {
    const before = sample(await scrape(server), 'idp_rate_limit_fallback_decisions_total') ?? 0;
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: 'nobody@example.com', password: PASSWORD });
    expect(login.status).toBe(401);
    const text = await scrape(server);
    expect(sample(text, 'idp_rate_limit_store_shared')).toBe(0);
    expect(sample(text, 'idp_rate_limit_fallback_decisions_total')).toBeGreaterThan(before);
  });
});

describe('rate-limit rejections in the metrics', () => {
  it('counts each 429 under the budget that refused it', async () => {
    const server = await startTestServer({ METRICS_ENABLED: 'true', METRICS_PORT: '0', RATE_LIMIT_SCALE: '1' });
    try {
      const api = new Api(server.url);
      const tenant = await createTenant(api);
      const statuses: number[] = [];
      for (let i = 0; i < 12; i += 1) {
        statuses.push((await api.post(`/v1/${tenant.slug}/auth/login`, { email: tenant.adminEmail, password: 'wrong password' })).status);
      }
      const refused = statuses.filter((status) => status === 429).length;
      expect(refused).toBeGreaterThanOrEqual(1);
      const text = await scrape(server);
      const counted = text.split('\n').filter((l) => l.startsWith('idp_rate_limit_rejections_total{budget="'));
      expect(counted.reduce((sum, l) => sum + Number(l.split(' ')[1]), 0)).toBe(refused);
      expect(text).not.toContain(tenant.adminEmail);
    } finally {
      await server.close();
    }
  });
});
