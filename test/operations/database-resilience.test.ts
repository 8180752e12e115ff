import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The service against a real PostgreSQL server when things are not calm: instances starting together
 * on an empty database, and PostgreSQL dropping the service's connections (as a server restart or failover does). Only this
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
    // The pool's notice of the dropped connections reaches the service log, not bare stdout.
    expect(server.logs.some((l) => l.includes('database driver warning'))).toBe(true);
  });
});

describe.skipIf(inject('embeddedDatabase'))('instances started together on an empty database', () => {
  it('all start: migrations run once, in turn, under an advisory lock', async () => {
    const url = new URL(inject('databaseUrl'));
    const name = `idp_fresh_${unique()}`;
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    await admin.query(`create database ${name}`);
    url.pathname = `/${name}`;
    const started = await Promise.allSettled([1, 2, 3].map(() => startTestServer({ DATABASE_URL: url.toString() })));
    try {
      expect(started.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const tenant = await createTenant(new Api(servers[0]!.url));
      for (const server of servers) {
        expect((await new Api(server.url).get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken })).status).toBe(200);
      }
    } finally {
      await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
