import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember, type TestTenant } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/**
 * PostgreSQL dropping the service's connections (as a server restart or failover does). Only this
 * instance's own backends are terminated, found through its pool, so other tests sharing the
 * server are untouched.
 */
interface PooledClient {
  processID?: number;
}
interface TarnPool {
  free: { resource: PooledClient }[];
  used: { resource: PooledClient }[];
}

function backendPids(server: TestServer): number[] {
  const knex = server.services.orm.em.getConnection().getKnex() as unknown as { client: { pool: TarnPool } };
  const { pool } = knex.client;
  return [...pool.free, ...pool.used].map((r) => r.resource.processID).filter((pid): pid is number => typeof pid === 'number');
}

describe.skipIf(inject('embeddedDatabase'))('PostgreSQL connections terminated under a running instance', () => {
  let server: TestServer;
  let api: Api;
  let tenant: TestTenant;
  let admin: pg.Client;

  beforeAll(async () => {
    server = await startTestServer();
    api = new Api(server.url);
    tenant = await createTenant(api);
    admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await server?.close();
  });

  it('reconnects without a restart: the next requests succeed', async () => {
    const member = await signupMember(api, tenant.slug);
    // Several requests at once so the pool holds more than one connection.
    const warm = await Promise.all(Array.from({ length: 6 }, () => api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })));
    expect(warm.every((r) => r.status === 200)).toBe(true);

    const pids = backendPids(server);
    expect(pids.length).toBeGreaterThan(0);
    const killed = await admin.query<{ terminated: boolean }>('select pg_terminate_backend(pid) as terminated from unnest($1::int[]) as pid', [pids]);
    expect(killed.rows.every((r) => r.terminated)).toBe(true);
    // The backends are gone from the server before the service is asked anything.
    for (let i = 0; i < 100; i += 1) {
      const left = await admin.query('select 1 from pg_stat_activity where pid = any($1::int[])', [pids]);
      if (left.rowCount === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }

    const ready = await api.get('/ready');
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(backendPids(server).some((pid) => !pids.includes(pid))).toBe(true);
  });
});
