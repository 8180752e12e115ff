/**
 * The console's heavy reads, timed query by query on seeded data (docs/performance.md "Console
 * queries"): the users search of GET users (whole address, number prefix, the domain) and the four
 * statements of GET audit/activity, on one tenant of 100,000 users and 1,000,000 audit events.
 * The seeded events are one second apart ending now (about 11.6 days), so today's open day holds up
 * to 86,400 of them. Each statement runs sequentially (no concurrent load), so the figures are the database's own time
 * plus the driver's, not queueing.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:queries -- [--users N] [--events N] [--runs N]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { openDatabase } from '../src/db/orm.js';
import { ActivityService, activityWindow } from '../src/services/audit/activity-service.js';
import { AuditService } from '../src/services/audit/audit-service.js';
import { organizationsClaim } from '../src/services/organizations/organization-claims.js';
import { OrganizationMembershipService } from '../src/services/organizations/organization-membership-service.js';
import { OrganizationRoleService } from '../src/services/organizations/organization-role-service.js';
import { OrganizationService } from '../src/services/organizations/organization-service.js';
import { UserDirectoryService } from '../src/services/users/user-directory-service.js';
import { createBenchDatabase, Seeder } from './database.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    events: { type: 'string', default: '1000000' },
    organizations: { type: 'string', default: '100000' },
    memberships: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '200' },
    'keep-db': { type: 'boolean', default: false },
    explain: { type: 'boolean', default: false },
  },
});
const USERS = Number(values.users);
const EVENTS = Number(values.events);
const ORGANIZATIONS = Number(values.organizations);
const MEMBERSHIPS = Number(values.memberships);
const RUNS = Number(values.runs);

/** Milliseconds at the given quantile (0..1) of sorted samples. */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function time(label: string, run: (i: number) => Promise<unknown>, runs = RUNS): Promise<{ label: string; p50: number; p95: number; max: number }> {
  for (let i = 0; i < 5; i++) await run(i); // warm the plan cache and the buffers
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    await run(i);
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { label, p50: quantile(samples, 0.5), p95: quantile(samples, 0.95), max: samples.at(-1)! };
}

/**
 * The database's own time of each call: `run(i)` once with its statements caught, then each statement
 * under `EXPLAIN (ANALYZE, TIMING OFF)` on `client`, planning plus execution milliseconds summed.
 */
async function databaseTime(
  orm: MikroORM, client: pg.Client, label: string, run: (i: number) => Promise<unknown>, runs: number,
): Promise<{ p50: number; p95: number }> {
  const caught: string[] = [];
  orm.config.set('onQuery', (sql: string, params: unknown[]) => {
    caught.push(orm.em.getPlatform().formatQuery(sql, params));
    return sql;
  });
  const samples: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      caught.length = 0;
      await run(i);
      const statements = [...caught];
      let ms = 0;
      for (const sql of statements) {
        const { rows } = await client.query<{ 'QUERY PLAN': [{ 'Planning Time': number; 'Execution Time': number }] }>(`explain (analyze, timing off, format json) ${sql}`);
        ms += rows[0]!['QUERY PLAN'][0]['Planning Time'] + rows[0]!['QUERY PLAN'][0]['Execution Time'];
        if (values.explain && i === 0) {
          const plan = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${sql}`);
          console.log(`\n-- ${label}\n${sql.replace(/\s+/g, ' ').slice(0, 400)}\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
        }
      }
      samples.push(ms);
    }
  } finally {
    orm.config.set('onQuery', (sql: string) => sql);
  }
  samples.sort((a, b) => a - b);
  return { p50: quantile(samples, 0.5), p95: quantile(samples, 0.95) };
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = await createBenchDatabase(serverUrl);
  const orm = await openDatabase(database.url, 2);
  const seeder = await Seeder.connect(database.url);
  try {
    const tenantId = randomUUID();
    const em = orm.em.fork();
    await em.execute(
      `insert into tenant (id, slug, name, plan, mfa_policy, require_email_verification, signup_policy, signup_email_domains, created_at, updated_at)
       values (?, ?, 'Bench Console', 'free', 'Optional', false, 'Open', '[]', now(), now())`,
      [tenantId, `bench-console-${Date.now()}`],
    );
    let started = Date.now();
    await seeder.seedUsers(tenantId, 'user', USERS, 'not-a-hash');
    const [admin] = (await em.execute('select id from app_user where tenant_id = ? order by created_at limit 1', [tenantId])) as { id: string }[];
    console.log(`seeded ${USERS} users in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    started = Date.now();
    await seeder.seedAuditEvents(tenantId, admin!.id, EVENTS, () => undefined);
    // Sign-ins touch last_login_at; a tenth of the users signed in within the week, a third within the month.
    await em.execute(
      `update app_user set last_login_at = now() - make_interval(days => (abs(hashtext(id::text)) % 90))
        where tenant_id = ? and abs(hashtext(id::text)) % 3 = 0`,
      [tenantId],
    );
    await em.execute('analyze app_user');
    console.log(`seeded ${EVENTS} audit events in ${((Date.now() - started) / 1000).toFixed(0)} s`);

    started = Date.now();
    const orgTenantId = randomUUID();
    await em.execute(
      `insert into tenant (id, slug, name, plan, mfa_policy, require_email_verification, signup_policy, signup_email_domains, created_at, updated_at)
       values (?, ?, 'Bench Organizations', 'free', 'Optional', false, 'Open', '[]', now(), now())`,
      [orgTenantId, `bench-organizations-${Date.now()}`],
    );
    const seeded = await seeder.seedOrganizations(orgTenantId, ORGANIZATIONS, MEMBERSHIPS, (done) => process.stdout.write(`\r${done} memberships`));
    console.log(
      `\rseeded ${ORGANIZATIONS} organizations, ${MEMBERSHIPS} memberships of ${seeded.people} people in ${((Date.now() - started) / 1000).toFixed(0)} s` +
      ` (largest ${seeded.largest.members} members, typical ${seeded.typical.members}; the busiest person in ${seeded.busiest.organizations})`,
    );

    const directory = new UserDirectoryService();
    const activity = new ActivityService();
    const window = activityWindow(new Date());
    const fresh = () => orm.em.fork();
    // The first view of a day keeps the counts of the closed days (once per tenant and day).
    const firstStarted = process.hrtime.bigint();
    await activity.summary(fresh(), tenantId);
    const firstMs = Number(process.hrtime.bigint() - firstStarted) / 1e6;
    const results = [
      await time('users search: a whole address (1 match)', (i) => directory.listPage(fresh(), tenantId, 50, undefined, { search: `user${1 + ((i * 7919) % USERS)}@` })),
      await time('users search: a number prefix (~110 matches)', (i) => directory.listPage(fresh(), tenantId, 50, undefined, { search: `user${100 + (i % 800)}` })),
      await time('users search: the domain (every user, first 50)', () => directory.listPage(fresh(), tenantId, 50, undefined, { search: 'bench.test' })),
      await time('activity: sign-ins and failed sign-ins per day', () => activity.signInsPerDay(fresh(), tenantId, window)),
      await time('activity: sign-ups per day', () => activity.signUpsPerDay(fresh(), tenantId, window)),
      await time('activity: active users 7/30 days', () => activity.activeUsers(fresh(), tenantId, new Date())),
      await time('activity: MFA adoption', () => activity.mfaAdoption(fresh(), tenantId)),
      await time('activity: the whole page (4 statements)', () => activity.summary(fresh(), tenantId)),
    ];
    const audit = new AuditService();
    const organizations = new OrganizationService(audit);
    const members = new OrganizationMembershipService(new OrganizationRoleService(audit), audit);
    let pageCursor: string | undefined;
    const explainClient = new pg.Client({ connectionString: database.url });
    await explainClient.connect();
    const timeBoth = async (label: string, run: (i: number) => Promise<unknown>, runs = RUNS) => ({
      ...(await time(label, run, runs)),
      db: await databaseTime(orm as unknown as MikroORM, explainClient, label, run, Math.min(runs, 50)),
    });
    let memberCursor: string | undefined;
    const orgResults = [
      await timeBoth('me/organizations: a person in 2', () => members.organizationsOf(fresh(), orgTenantId, seeded.personInTwo)),
      await timeBoth(`me/organizations: the person in the most (${seeded.busiest.organizations})`, () => members.organizationsOf(fresh(), orgTenantId, seeded.busiest.id)),
      await timeBoth('organizations claim (userinfo, ID token): a person in 2', () => organizationsClaim(fresh(), orgTenantId, seeded.personInTwo, 'openid email organizations')),
      await timeBoth(`members: a typical organization (${seeded.typical.members})`, () => members.list(fresh(), orgTenantId, seeded.typical.id, { limit: 100 })),
      await timeBoth(`members: an organization of ${seeded.thousand.members}, the first page of 100`, () => members.list(fresh(), orgTenantId, seeded.thousand.id, { limit: 100 })),
      await timeBoth(`members: the largest organization (${seeded.largest.members}), the first page of 100`, () => members.list(fresh(), orgTenantId, seeded.largest.id, { limit: 100 })),
      await timeBoth(`members: the largest organization, the next ${RUNS} pages of 100, one after another`, async () => {
        const page = await members.list(fresh(), orgTenantId, seeded.largest.id, { limit: 100, cursor: memberCursor });
        memberCursor = page.nextCursor ?? undefined;
      }),
      await timeBoth('organizations list: the first page of 50 (holds the largest)', () => organizations.list(fresh(), orgTenantId, { limit: 50 })),
      await timeBoth(`organizations list: the next ${RUNS} pages of 50, one after another`, async () => {
        const page = await organizations.list(fresh(), orgTenantId, { limit: 50, cursor: pageCursor });
        pageCursor = page.nextCursor ?? undefined;
      }),
      await timeBoth('organizations search: one word (a twentieth match, first 50)', () => organizations.list(fresh(), orgTenantId, { limit: 50, search: 'northwind' })),
      await timeBoth('organizations search: two words (1/400 match, first 50)', () => organizations.list(fresh(), orgTenantId, { limit: 50, search: 'contoso health' })),
      await timeBoth('organizations search: a number (~20 matches)', (i) => organizations.list(fresh(), orgTenantId, { limit: 50, search: String(1000 + ((i * 37) % 8000)) })),
      await timeBoth('organizations search: no match', () => organizations.list(fresh(), orgTenantId, { limit: 50, search: 'no such company' })),
    ];
    console.log(`\n${USERS} users, ${EVENTS} audit events, ${RUNS} sequential runs per query\n`);
    console.log('| query | p50 ms | p95 ms | max ms |\n|---|---|---|---|');
    for (const r of results) console.log(`| ${r.label} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} |`);
    console.log(`| activity: the first view of the day (keeps the closed days' counts), once | ${firstMs.toFixed(1)} | | |`);
    console.log(`\n${ORGANIZATIONS} organizations, ${MEMBERSHIPS} memberships, ${seeded.people} people in another tenant\n`);
    console.log('| query | p50 ms | p95 ms | max ms | database p50 ms | database p95 ms |\n|---|---|---|---|---|---|');
    for (const r of orgResults) {
      console.log(`| ${r.label} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} | ${r.db.p50.toFixed(1)} | ${r.db.p95.toFixed(1)} |`);
    }
    await explainClient.end();
  } finally {
    await seeder.close();
    await orm.close(true);
    if (values['keep-db']) console.log(`kept the database ${database.name}`);
    else await database.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
