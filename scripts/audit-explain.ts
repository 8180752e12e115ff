/**
 * Shows the query plans of GET audit on a tenant with 1,000,000 events (docs/audit.md).
 *
 *   ADMIN_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx scripts/audit-explain.ts
 *
 * Creates a scratch database `idp_audit_explain` on that server (dropped and re-created), applies the
 * migrations, generates the events with one INSERT … SELECT generate_series per tenant, and prints
 * EXPLAIN (ANALYZE, BUFFERS) of the SQL that AuditLogService runs for each filter. `--explain-only`
 * reuses the scratch database of an earlier run. Never run it
 * against a database you care about; it is not part of the test suite.
 */
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openDatabase } from '../src/db/orm.js';
import type { AuditSql } from '../src/queries/audit-event.js';
import { AuditLogService, type AuditQuery } from '../src/services/audit/audit-log-service.js';

const SCRATCH = 'idp_audit_explain';
const EVENTS = Number(process.env.EVENTS ?? 1_000_000);
const USERS = 1000;
const BIG_TENANT = '11111111-1111-4111-8111-111111111111';
const OTHER_TENANT = '22222222-2222-4222-8222-222222222222';

async function main(): Promise<void> {
  if (process.argv.includes('--explain-only')) {
    const url = new URL(process.env.ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    url.pathname = `/${SCRATCH}`;
    const orm = await openDatabase(url.toString(), 2);
    try {
      await explainAll(orm.em.fork() as EntityManager);
    } finally {
      await orm.close(true);
    }
    return;
  }
  const adminUrl = process.env.ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${SCRATCH} with (force)`);
  await admin.query(`create database ${SCRATCH}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${SCRATCH}`;
  const orm = await openDatabase(url.toString(), 2);
  const em = orm.em.fork() as EntityManager;
  try {
    await seed(em);
    await explainAll(em);
  } finally {
    await orm.close(true);
  }
}

async function seed(em: EntityManager): Promise<void> {
  for (const [id, slug] of [[BIG_TENANT, 'big'], [OTHER_TENANT, 'other']]) {
    await em.execute(
      `insert into tenant (id, slug, name, plan, mfa_policy, created_at, updated_at) values (?, ?, ?, 'Free', 'Optional', now(), now())`,
      [id, slug, slug],
    );
    await em.execute(
      `insert into app_user (id, tenant_id, email, status, role, created_at, updated_at)
       select md5(? || n)::uuid, ?, 'user-' || n || '@' || ? || '.example.com', 'Active', 'Member', now(), now()
         from generate_series(1, ?) as n`,
      [slug, id, slug, USERS],
    );
  }
  const started = Date.now();
  // One statement per tenant: the big one gets EVENTS events over a year, the other a tenth of that.
  for (const [id, slug, count] of [[BIG_TENANT, 'big', EVENTS], [OTHER_TENANT, 'other', Math.floor(EVENTS / 10)]] as const) {
    await em.execute(
      `insert into audit_event (id, tenant_id, action, actor_type, actor_id, target_type, target_id, ip, user_agent, details, created_at)
       select gen_random_uuid(), ?, a.action, 'user', md5(? || u.n)::uuid,
              case when a.action like 'Session%' then 'session' else 'user' end,
              case when a.action like 'Session%' then gen_random_uuid()::text else md5(? || u.n)::uuid::text end,
              '10.0.' || (i % 250) || '.' || (i % 200), 'Mozilla/5.0',
              case when a.action in ('UserSignup', 'UserLoginFailed', 'UserSoftDeleted', 'InviteCreated')
                   then jsonb_build_object('email', 'user-' || u.n || '@' || ? || '.example.com', 'reason', 'seed')
                   else jsonb_build_object('method', 'password') end,
              now() - (i * (31536000.0 / ?)) * interval '1 second'
         from generate_series(1, ?) as i
         cross join lateral (select 1 + (hashint4(i) & 1023) % ? as n) as u
         cross join lateral (select (array['UserLogin','UserLogin','UserLogin','SessionCreated','SessionCreated','SessionCreated',
                                           'SessionRevoked','SessionRevoked','UserLogout','UserLoginFailed','MfaTotpVerified',
                                           'UserSignup','InviteCreated','ApiKeyCreated','TenantUpdated','UserSoftDeleted'])
                                    [1 + (hashint4(i + 7) & 15)] as action) as a`,
      [id, slug, slug, slug, count, count, USERS],
    );
  }
  await em.execute('analyze');
  console.log(`-- seeded ${EVENTS} + ${Math.floor(EVENTS / 10)} events in ${Math.round((Date.now() - started) / 1000)} s`);
}

async function explainAll(em: EntityManager): Promise<void> {
  const service = new AuditLogService();
  const someUser = ((await em.execute(`select md5('big' || 777)::uuid as id`)) as { id: string }[])[0]!.id;
  const halfYearAgo = new Date(Date.now() - 182 * 86_400_000);
  const cases: [string, AuditQuery][] = [
    ['first page, no filter', { limit: 50 }],
    ['deep page: before six months ago', { before: halfYearAgo, limit: 50 }],
    ['action=UserLoginFailed', { action: 'UserLoginFailed', limit: 50 }],
    ['action=TenantUpdated, before six months ago', { action: 'TenantUpdated', before: halfYearAgo, limit: 50 }],
    ['userId (actor or target)', { userId: someUser, limit: 50 }],
    ['search: one email', { search: 'user-777@big.example.com', limit: 50 }],
    ['search: a common word', { search: 'login', limit: 50 }],
    ['search: no match', { search: 'no-such-text-anywhere', limit: 50 }],
  ];
  for (const [label, query] of cases) {
    const plan = service.plan(BIG_TENANT, query);
    const found = await service.list(em, BIG_TENANT, query);
    const passes: [string, AuditSql][] = [[plan.fallback ? 'recent-window pass' : 'query', plan.main]];
    if (plan.fallback) passes.push(['all-matches pass (runs when the first found less than a page)', plan.fallback]);
    console.log(`\n### ${label} (${found.length} items)`);
    for (const [pass, { sql, params }] of passes) {
      // Twice: the first run warms the cache, the second is the one shown.
      await em.execute(`explain (analyze) ${sql}`, params);
      const rows = (await em.execute(`explain (analyze, buffers) ${sql}`, params)) as { 'QUERY PLAN': string }[];
      console.log(`\n${pass}:\n\n\`\`\`\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n\`\`\``);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
