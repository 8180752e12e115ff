import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { mannWhitneyPValue } from '../helpers/statistics.js';
import { setMfaPolicy } from '../helpers/tenant-settings.js';

/** Requests per group; the first WARM_UP pairs are not counted. */
const SAMPLES = 80;
const WARM_UP = 10;
/** Significance below which the two latency distributions count as different. */
const ALPHA = 0.001;
/**
 * How long to let the worker settle once the queue table is empty, in milliseconds: its trailing
 * work outlives the last job row (the next poll it schedules at once, the garbage a rendered mail
 * leaves), and without the pause that work of the existing account's jobs lands in the next request
 * and shows as a difference of about 0.1 ms (measured: gone with 30 ms).
 */
const SETTLE_MS = 30;

let server: TestServer;
let api: Api;
let tenant: TestTenant;
let member: { email: string };

/**
 * Waits until the instance's queue is empty and the worker has settled ({@link SETTLE_MS}), so the
 * background work of one request never overlaps the next one: this test is about the answer itself.
 */
async function queueIdle(): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < 20_000) {
    const rows = await server.services.orm.em.fork().execute('select 1 from job where queue = ? and failed_at is null limit 1', [server.services.jobs.name]);
    if (rows.length === 0) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the job queue did not drain');
}

async function timed(route: string, email: string): Promise<number> {
  await queueIdle();
  const started = performance.now();
  const res = await api.post(`/v1/${tenant.slug}/${route}`, { email });
  const elapsed = performance.now() - started;
  expect(res.body).toEqual({ ok: true });
  return elapsed;
}

/**
 * Latencies of alternating requests for the existing account and for one unknown email (one email
 * each, so both sides touch their rate-limit counters the same way). The pairs alternate their
 * order (existing first, then unknown first: E U U E E U …), so each side follows itself as often as
 * it follows the other: whatever an existing account's background work leaves for the next request
 * (the queue settles but the collector may not) falls on both sides alike. With a random order
 * within each pair, three in four requests after an existing one were unknown ones, and that
 * carry-over alone once gave p = 0.0007.
 */
async function sample(route: string): Promise<{ existing: number[]; unknown: number[] }> {
  const existing: number[] = [];
  const unknown: number[] = [];
  const nobody = `nobody-${unique()}@example.com`;
  for (let i = 0; i < SAMPLES + WARM_UP; i++) {
    const existingFirst = i % 2 === 0;
    const first = await timed(route, existingFirst ? member.email : nobody);
    const second = await timed(route, existingFirst ? nobody : member.email);
    const [a, b] = existingFirst ? [first, second] : [second, first];
    if (i >= WARM_UP) {
      existing.push(a);
      unknown.push(b);
    }
  }
  return { existing, unknown };
}

const mailsTo = (email: string): number => {
  const outbox = path.join(server.services.config.dataDir, 'outbox');
  if (!existsSync(outbox)) return 0;
  // a mail is written as `.eml.tmp` and renamed: only finished ones are read
  return readdirSync(outbox).filter((f) => f.endsWith('.eml') && readFileSync(path.join(outbox, f), 'utf8').includes(email)).length;
};

describe('answers that do not reveal whether an account exists', () => {
  beforeAll(async () => {
    server = await startTestServer({ SMTP_URL: undefined });
    api = new Api(server.url);
    tenant = await createTenant(api);
    await setMfaPolicy(server, tenant.slug, 'Required');
    member = await signupMember(api, tenant.slug);
  });
  afterAll(async () => {
    await server.close();
  });

  for (const route of ['auth/request-email-otp', 'auth/password-reset/request', 'auth/request-email-verification']) {
    it(`${route}: latencies for an existing and an unknown account come from one distribution (Mann-Whitney U)`, async () => {
      // a mail of the previous route still on its way would count as this route's
      await queueIdle();
      const before = mailsTo(member.email);
      const { existing, unknown } = await sample(route);
      const { z, p } = mannWhitneyPValue(existing, unknown);
      expect(p, `z = ${z.toFixed(2)}`).toBeGreaterThan(ALPHA);
      await queueIdle();
      // the existing account did get its mails, the unknown ones none
      expect(mailsTo(member.email) - before).toBe(SAMPLES + WARM_UP);
      expect(mailsTo('nobody-')).toBe(0);
    });
  }
});
