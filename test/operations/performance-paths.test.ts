import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { defaultThreadpoolSize } from '../../src/threadpool.js';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique } from '../helpers/api.js';
import { startTestServer, TEST_ENCRYPTION_KEYS, TEST_JWT_SECRET, type TestServer } from '../helpers/server.js';
import { systemScope } from '../../src/lib/request-scope.js';

// The hot paths (docs/performance.md): audit writes with their webhook outbox, the one-statement
// refresh and session start, plain-SQL look-ups, and the opt-in cluster. Speed itself is measured
// by `npm run bench`, never asserted here.

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
});
afterAll(() => server.close());

const em = () => server.services.orm.em.fork() as EntityManager;

async function auditRows(tenantId: string, action?: string): Promise<{ action: string; details: Record<string, unknown>; user_agent: string | null }[]> {
  return em().execute(
    `select action, details, user_agent from audit_event where tenant_id = ? ${action ? 'and action = ?' : ''} order by created_at, action`,
    action ? [tenantId, action] : [tenantId],
  );
}

describe('audit writes in the caller\'s transaction', () => {
  it('writes each event when it is recorded, visible inside the transaction and kept when it commits', async () => {
    const t = await createTenant(api);
    await em().transactional(async (tx) => {
      for (let i = 0; i < 3; i++) {
        await server.services.audit.record(systemScope(tx, t.id), { action: 'TenantUpdated', details: { i, note: 'what? it\'s "quoted"' } });
      }
      // written at once, in this transaction: no hook writes them later
      const seenInside = await tx.execute(`select count(*)::int as n from audit_event where tenant_id = ? and action = 'TenantUpdated'`, [t.id]);
      expect(seenInside[0]!.n).toBe(3);
    });
    const rows = await auditRows(t.id, 'TenantUpdated');
    expect(rows.map((r) => r.details.i).sort()).toEqual([0, 1, 2]);
    expect(rows[0]!.details.note).toBe('what? it\'s "quoted"');
  });

  it('leaves no event of a transaction that rolls back', async () => {
    const t = await createTenant(api);
    await expect(
      em().transactional(async (tx) => {
        await server.services.audit.record(systemScope(tx, t.id), { action: 'TenantUpdated' });
        throw new Error('operation failed');
      }),
    ).rejects.toThrow('operation failed');
    expect(await auditRows(t.id, 'TenantUpdated')).toEqual([]);
  });

  it('fails the operation when its event cannot be written', async () => {
    const t = await createTenant(api);
    const marker = `rollback-${unique()}`;
    await expect(
      em().transactional(async (tx) => {
        await tx.execute('update tenant set name = ? where id = ?', [marker, t.id]);
        // an unknown tenant id violates the audit_event foreign key: the record call throws
        await server.services.audit.record(systemScope(tx, '00000000-0000-4000-8000-000000000000'), { action: 'TenantUpdated' });
      }),
    ).rejects.toThrow();
    const tenant = await em().execute('select name from tenant where id = ?', [t.id]);
    expect(tenant[0]!.name).not.toBe(marker);
  });

  it('writes an event recorded outside a transaction at once', async () => {
    const t = await createTenant(api);
    await server.services.audit.record(systemScope(em(), t.id), { action: 'TenantUpdated' });
    expect(await auditRows(t.id, 'TenantUpdated')).toHaveLength(1);
  });

  it('records a login with all its events, request metadata included', async () => {
    const t = await createTenant(api);
    const res = await api.post(`/v1/${t.slug}/auth/login`, { email: t.adminEmail, password: PASSWORD }, { headers: { 'user-agent': 'perf-test/1.0' } });
    expect(res.status).toBe(200);
    const logins = await auditRows(t.id, 'UserLogin');
    expect(logins).toHaveLength(1);
    expect(logins[0]!.user_agent).toBe('perf-test/1.0');
    // tenant creation's session and the login's session
    expect(await auditRows(t.id, 'SessionCreated')).toHaveLength(2);
  });
});

describe('one-statement session start and refresh', () => {
  it('starts a session with its first refresh token and lastLoginAt in one go', async () => {
    const t = await createTenant(api);
    const m = await signupMember(api, t.slug);
    const sessions = await em().execute(
      `select s.id, s.user_agent, u.last_login_at, (select count(*)::int from refresh_token rt where rt.session_id = s.id) as tokens
         from session s join app_user u on u.id = s.user_id where s.user_id = ?`,
      [m.id],
    );
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.tokens).toBe(1);
    expect(sessions[0]!.last_login_at).not.toBeNull();
  });

  it('rotates: new pair with the user, parent linked, no session row written', async () => {
    const t = await createTenant(api);
    const m = await signupMember(api, t.slug);
    // xmin is the transaction that last wrote a row: a refresh must not write the session row
    const sessionXmin = async () => ((await em().execute('select xmin::text as xmin from session where user_id = ?', [m.id])) as { xmin: string }[])[0]!.xmin;
    const before = await sessionXmin();
    const res = await api.post(`/v1/${t.slug}/auth/refresh`, { refreshToken: m.refreshToken });
    expect(res.status).toBe(200);
    expect(res.body.user).toEqual({ id: m.id, email: m.email, role: 'Member', status: 'Active' });
    const tokens = await em().execute(
      `select rt.parent_id, rt.rotated_at from refresh_token rt join session s on s.id = rt.session_id
        where s.user_id = ? order by rt.created_at, rt.parent_id nulls first`,
      [m.id],
    );
    expect(tokens).toHaveLength(2);
    expect(tokens[0]!.rotated_at).not.toBeNull();
    expect(tokens[1]!.parent_id).not.toBeNull();
    expect(tokens[1]!.rotated_at).toBeNull();
    expect(await sessionXmin()).toBe(before);
    const me = await api.get(`/v1/${t.slug}/me`, { token: res.body.accessToken });
    expect(me.status).toBe(200);
  });

  it('ends the session of a suspended user at refresh and issues nothing', async () => {
    const t = await createTenant(api);
    const m = await signupMember(api, t.slug);
    await em().execute(`update app_user set status = 'Suspended' where id = ?`, [m.id]);
    expectError(await api.post(`/v1/${t.slug}/auth/refresh`, { refreshToken: m.refreshToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    const rows = await em().execute(
      `select s.revoked_at, s.revoked_reason, (select count(*)::int from refresh_token rt where rt.session_id = s.id) as tokens
         from session s where s.user_id = ?`,
      [m.id],
    );
    expect(rows[0]!.revoked_at).not.toBeNull();
    expect(rows[0]!.tokens).toBe(1);
  });
});

describe('plain-SQL look-ups', () => {
  it('maps the user of GET /me with every field', async () => {
    const t = await createTenant(api);
    const res = await api.get(`/v1/${t.slug}/me`, { token: t.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: t.adminId, tenantId: t.id, email: t.adminEmail, role: 'Admin', status: 'Active', totpEnrolled: false });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    expect(res.body.tenant).toEqual({ slug: t.slug, name: expect.any(String) });
  });

  it('reads tenant and session in one query yet refuses an ended session, a suspended user and a foreign token at once', async () => {
    const a = await createTenant(api);
    const b = await createTenant(api);
    const m = await signupMember(api, a.slug);
    expect((await api.get(`/v1/${a.slug}/me`, { token: m.accessToken })).status).toBe(200);
    expectError(await api.get(`/v1/${b.slug}/me`, { token: m.accessToken }), 401, 'UNAUTHORIZED', 'tenant_mismatch');
    await em().execute(`update app_user set status = 'Suspended' where id = ?`, [m.id]);
    expectError(await api.get(`/v1/${a.slug}/me`, { token: m.accessToken }), 401, 'UNAUTHORIZED', 'user_suspended');
    await em().execute(`update app_user set status = 'Active' where id = ?`, [m.id]);
    expect((await api.post(`/v1/${a.slug}/auth/logout`, { refreshToken: m.refreshToken })).status).toBe(200);
    expectError(await api.get(`/v1/${a.slug}/me`, { token: m.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await api.get(`/v1/unknown-${unique()}/me`, { token: a.accessToken }), 404, 'NOT_FOUND');
  });

  it('reads the workspace once for a sign-in: the brute-force guard\'s read serves the route too', async () => {
    const t = await createTenant(api);
    const statements: string[] = [];
    const root = server.services.orm.em;
    const fork = root.fork.bind(root);
    // every request's entity manager is a fork of the root one: record what each executes
    root.fork = ((...args: Parameters<typeof root.fork>) => {
      const forked = fork(...args) as EntityManager;
      const execute = forked.execute.bind(forked);
      forked.execute = ((sql: string, ...rest: unknown[]) => {
        statements.push(String(sql));
        return (execute as (...a: unknown[]) => unknown)(sql, ...rest);
      }) as typeof forked.execute;
      return forked;
    }) as typeof root.fork;
    try {
      const ok = await api.post(`/v1/${t.slug}/auth/login`, { email: t.adminEmail, password: PASSWORD });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(statements.filter((sql) => /from tenant where slug/.test(sql))).toHaveLength(1);
      // the same read refuses an unknown workspace, and the lockout still counts a wrong password
      expectError(await api.post(`/v1/unknown-${unique()}/auth/login`, { email: t.adminEmail, password: 'x' }), 404, 'NOT_FOUND');
      expectError(await api.post(`/v1/${t.slug}/auth/login`, { email: t.adminEmail, password: 'wrong password' }), 401, 'UNAUTHORIZED', 'invalid_credentials');
    } finally {
      root.fork = fork;
    }
  });

  it('sees a tenant deletion at once (no cache)', async () => {
    const t = await createTenant(api);
    expect((await api.get(`/v1/${t.slug}/me`, { token: t.accessToken })).status).toBe(200);
    await em().execute('update tenant set deleted_at = now() where id = ?', [t.id]);
    expectError(await api.get(`/v1/${t.slug}/me`, { token: t.accessToken }), 404, 'NOT_FOUND');
  });
});

describe('WEB_CONCURRENCY', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'idp-perf-'));

  it('defaults to one process and accepts more with a PostgreSQL server', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).webConcurrency).toBe(1);
    expect(loadConfig({ DATA_DIR: dataDir(), WEB_CONCURRENCY: '2', DATABASE_URL: 'postgres://h/db' }).webConcurrency).toBe(2);
  });

  it('refuses 0, non-integers, and more than one process on the embedded database', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), WEB_CONCURRENCY: '0' })).toThrow(/WEB_CONCURRENCY/);
    expect(() => loadConfig({ DATA_DIR: dataDir(), WEB_CONCURRENCY: '1.5', DATABASE_URL: 'postgres://h/db' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: dataDir(), WEB_CONCURRENCY: '2' })).toThrow(/WEB_CONCURRENCY above 1 needs DATABASE_URL/);
  });

  it('runs that many workers on one port and stops them all on SIGTERM', async () => {
    if (inject('embeddedDatabase')) return;
    let out = '';
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: {
        PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir(), PORT: '0', HOST: '127.0.0.1',
        DATABASE_URL: inject('databaseUrl'), JWT_SECRET: TEST_JWT_SECRET, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS, WEB_CONCURRENCY: '2',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const listening = () => [...out.matchAll(/"port":(\d+),"msg":"listening"/g)].map((m) => m[1]);
    for (let i = 0; i < 900 && (listening().length < 2 || !out.includes('all workers listening')); i++) await new Promise((r) => setTimeout(r, 100));
    const ports = listening();
    expect(ports, out).toHaveLength(2);
    expect(ports[0]).toBe(ports[1]);
    const health = await fetch(`http://127.0.0.1:${ports[0]}/health`);
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out.match(/"msg":"stopped"/g)).toHaveLength(2);
  }, 150_000); // its wait for the workers allows 90 s on a loaded machine
});

describe('libuv thread pool size of npm start', () => {
  it('is the cores per service process, at least 2, unless UV_THREADPOOL_SIZE is set', () => {
    expect(defaultThreadpoolSize({}, 8)).toBe(8);
    expect(defaultThreadpoolSize({ WEB_CONCURRENCY: '2' }, 8)).toBe(4);
    expect(defaultThreadpoolSize({ WEB_CONCURRENCY: '2' }, 2)).toBe(2);
    expect(defaultThreadpoolSize({}, 1)).toBe(2);
    expect(defaultThreadpoolSize({ WEB_CONCURRENCY: 'x' }, 6)).toBe(6);
    expect(defaultThreadpoolSize({ UV_THREADPOOL_SIZE: '16' }, 2)).toBeUndefined();
  });
});
