import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * A database that is down, restarting or drops a connection under a query: the client gets 503
 * `SERVICE_UNAVAILABLE` with `Retry-After` (never 500), on REST and /trpc, and a read whose connection
 * dropped is run again on a fresh one. The instance reaches PostgreSQL through a TCP forwarder this
 * file controls, so the shared server is never touched.
 */
describe.skipIf(inject('embeddedDatabase'))('dependency outages answer 503', () => {
  let proxy: TcpProxy;
  let server: TestServer;
  let api: Api;
  let tenant: TestTenant;
  let member: { email: string; accessToken: string; refreshToken: string };

  beforeAll(async () => {
    const target = new URL(inject('databaseUrl'));
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(target);
    viaProxy.port = String(proxy.port);
    // A slow queue poll keeps the worker's queries from taking the cut meant for a request.
    server = await startTestServer({ DATABASE_URL: viaProxy.toString(), JOB_POLL_INTERVAL_MS: '60000' });
    api = new Api(server.url);
    tenant = await createTenant(api);
    member = (await signupMember(api, tenant.slug)) as typeof member;
  });
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
  });

  it('a read whose connection drops under it is retried once on a fresh connection: 200', async () => {
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    proxy.cutNext(1);
    const me = await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.email).toBe(member.email);
    expect(server.logs.some((l) => l.includes('retrying once'))).toBe(true);
  });

  it('a write whose connection drops is not run twice: 503 with Retry-After, and the client may retry', async () => {
    proxy.cutNext(1);
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(login.status, JSON.stringify(login.body)).toBe(503);
    expect(login.body).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.any(String),
      details: { reason: 'service_unavailable' },
    });
    expect(Number(login.headers.get('retry-after'))).toBeGreaterThan(0);
    const again = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it('a database that refuses connections: 503 on REST reads and writes and on /trpc; 200 once it is back', async () => {
    await proxy.down();
    try {
      const me = await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
      expect(me.status, JSON.stringify(me.body)).toBe(503);
      expect(me.body.details).toEqual({ reason: 'service_unavailable' });
      expect(me.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(JSON.stringify(me.body)).not.toMatch(/ECONNREFUSED|select|knex/i);

      const signup = await api.post(`/v1/${tenant.slug}/auth/signup`, { email: `m-${unique()}@example.com`, password: PASSWORD });
      expect(signup.status, JSON.stringify(signup.body)).toBe(503);
      expect(signup.body.code).toBe('SERVICE_UNAVAILABLE');

      const trpc = await fetch(`${server.url}/trpc/me.get?input=${encodeURIComponent(JSON.stringify({ tenantSlug: tenant.slug }))}`, {
        headers: { authorization: `Bearer ${member.accessToken}` },
      });
      expect(trpc.status).toBe(503);
      expect(trpc.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      const body = (await trpc.json()) as { error: { data: { code: string; details: { reason: string } } } };
      expect(body.error.data.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.error.data.details.reason).toBe('service_unavailable');

      const ready = await api.get('/ready');
      expect(ready.status).toBe(503);
    } finally {
      await proxy.up();
    }
    const back = await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(server.logs.some((l) => l.includes('"status":500'))).toBe(false);
  });
});

describe('which failures are outages', () => {
  it('classifies the drivers’ errors of a restart, a refusal and a lost transaction, and nothing else', async () => {
    const { outageKind } = await import('../../src/lib/outage.js');
    const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });
    expect(outageKind(pgError('57P01', 'terminating connection due to administrator command'))).toBe('dropped');
    expect(outageKind(pgError('57P03', 'the database system is starting up'))).toBe('unreachable');
    expect(outageKind(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe('unreachable');
    expect(outageKind(pgError('ECONNRESET', 'read ECONNRESET'))).toBe('dropped');
    expect(outageKind(new Error('Connection terminated unexpectedly'))).toBe('dropped');
    expect(outageKind(new Error('Transaction query already complete, run with DEBUG=knex:tx for more info'))).toBe('dropped');
    expect(outageKind(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'))).toBe('unreachable');
    // wrapped, as tRPC wraps a thrown driver error
    expect(outageKind(Object.assign(new Error('Internal server error'), { cause: pgError('57P01', 'terminating connection') }))).toBe('dropped');
    // answers of a live server are not outages
    expect(outageKind(pgError('23505', 'duplicate key value violates unique constraint'))).toBeUndefined();
    expect(outageKind(pgError('42P01', 'relation "x" does not exist'))).toBeUndefined();
    expect(outageKind(new Error('boom'))).toBeUndefined();
  });
});
