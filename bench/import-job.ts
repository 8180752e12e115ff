/**
 * `npm run bench:import`: one import job of `--users` users (1,000,000 by default) through the API,
 * against the compiled service on PostgreSQL, while `GET me` is asked at a steady rate
 * (docs/performance.md "Import jobs"; docs/import.md "Import jobs").
 *
 * Creates its own database, starts the service (`dist/src/main.js`, one process, its in-process job
 * worker), creates a workspace (its Admin's session asks `GET me`) and an `ak_live_` API key (posts
 * the file and polls the job). The NDJSON body is generated while it is sent (never held whole):
 * `import<n>@import.bench.test`, verified, all with one shared bcrypt hash made once. Then polls
 * `GET users/import-jobs/{id}` until the job is done.
 *
 * Prints the wall time (upload and import), rows/s, the job's counters, the service's CPU time and
 * peak RSS, the machine's load, and the `GET me` latencies and errors. Exits 1 when the job failed,
 * a counter or the number of imported rows is wrong, or it took longer than `--limit-minutes`.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 \
 *     npm run bench:import -- [--users N] [--me-rate N] [--limit-minutes N] [--keep-db] [--cpu-prof DIR]
 *
 * `--cpu-prof DIR` starts the service with `--cpu-prof` and leaves its profile in DIR.
 */
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import bcrypt from 'bcryptjs';
import pg from 'pg';
import { JsonClient } from './client.js';
import { createBenchDatabase, type BenchDatabase } from './database.js';
import { ProcessMonitor, startService, type ServiceProcess } from './service.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '1000000' },
    'me-rate': { type: 'string', default: '20' },
    'limit-minutes': { type: 'string', default: '10' },
    'keep-db': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
  },
});
const USERS = positive('users', values.users);
const ME_RATE = positive('me-rate', values['me-rate']);
const LIMIT_MS = positive('limit-minutes', values['limit-minutes']) * 60_000;
const PASSWORD = 'bench-import-password';
/** Lines generated per chunk of the request body. */
const LINES_PER_CHUNK = 1000;

function positive(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${value}"`);
  return n;
}

const log = (line: string) => console.log(`[import ${new Date().toISOString().slice(11, 19)}] ${line}`);
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Milliseconds at the given quantile (0..1) of sorted samples. */
function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** The NDJSON body: `count` verified users sharing `hash`, generated chunk by chunk as the socket takes them. */
function ndjsonBody(count: number, hash: string): Readable {
  const password = JSON.stringify({ algorithm: 'bcrypt', hash });
  return Readable.from((function* () {
    for (let start = 0; start < count; start += LINES_PER_CHUNK) {
      let chunk = '';
      for (let n = start; n < Math.min(count, start + LINES_PER_CHUNK); n++) {
        chunk += `{"email":"import${n}@import.bench.test","emailVerified":true,"password":${password}}\n`;
      }
      yield chunk;
    }
  })());
}

/** POSTs a streamed body; resolves with the status and the parsed JSON answer. No timeout: the answer comes once the whole body is stored. */
function postStream(url: string, headers: Record<string, string>, body: Readable): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: text });
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    body.on('error', (err) => req.destroy(err));
    body.pipe(req);
  });
}

/**
 * Asks `GET me` every 1/rate seconds (open loop: a slow answer does not delay the next request) and
 * keeps each latency and every error. The session is refreshed before its access token expires.
 */
class MeProbe {
  readonly latencies: number[] = [];
  readonly errors: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  private refreshing: Promise<void> | undefined;
  private tokenAt = Date.now();

  constructor(private readonly api: JsonClient, private readonly slug: string, private session: { accessToken: string; refreshToken: string }) {}

  start(rate: number): void {
    this.timer = setInterval(() => {
      const one = this.once().finally(() => this.inFlight.delete(one));
      this.inFlight.add(one);
    }, 1000 / rate);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.inFlight);
  }

  private async once(): Promise<void> {
    // Access tokens live 15 minutes; a new one every 10 keeps the probe signed in through a long run.
    if (Date.now() - this.tokenAt > 10 * 60_000 && !this.refreshing) {
      this.refreshing = this.api.expectOk('POST', `/v1/${this.slug}/auth/refresh`, { refreshToken: this.session.refreshToken })
        .then((body: { accessToken: string; refreshToken: string }) => {
          this.session = { accessToken: body.accessToken, refreshToken: body.refreshToken };
          this.tokenAt = Date.now();
        })
        .catch((err: unknown) => void this.errors.push(`refresh: ${(err as Error).message.slice(0, 200)}`))
        .finally(() => (this.refreshing = undefined));
    }
    const started = process.hrtime.bigint();
    try {
      const res = await fetch(`${this.api.baseUrl}/v1/${this.slug}/me`, { headers: { authorization: `Bearer ${this.session.accessToken}` } });
      await res.arrayBuffer();
      if (res.status === 200) this.latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      else this.errors.push(`status ${res.status}`);
    } catch (err) {
      this.errors.push((err as Error).message.slice(0, 200));
    }
  }
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  let database: BenchDatabase | undefined;
  let service: ServiceProcess | undefined;
  let monitor: ProcessMonitor | undefined;
  let probe: MeProbe | undefined;
  const failures: string[] = [];
  try {
    database = await createBenchDatabase(serverUrl);
    service = await startService({ databaseUrl: database.url, redisUrl, processes: 1, cpuProfileDir: values['cpu-prof'] });
    log(`service up at ${service.url} (pid ${service.pid}), database ${database.name}`);
    const api = new JsonClient(service.url);
    const workspace = await api.expectOk('POST', '/v1/tenants', { tenant: { name: 'Bench Import' }, admin: { email: 'admin@import.bench.test', password: PASSWORD } });
    const slug = workspace.tenantSlug as string;
    const key = (await api.expectOk('POST', `/v1/${slug}/api-keys`, { name: 'bench import', environment: 'live' }, workspace.accessToken)).plaintext as string;
    // One shared hash, as an export of a system whose users all had the same password would carry.
    const hash = await bcrypt.hash(PASSWORD, 10);

    probe = new MeProbe(api, slug, { accessToken: workspace.accessToken, refreshToken: workspace.refreshToken });
    // GET me before the import, for comparison: the same rate for 10 s.
    probe.start(ME_RATE);
    await new Promise((r) => setTimeout(r, 10_000));
    await probe.stop();
    const idleMe = [...probe.latencies].sort((a, b) => a - b);
    const idleErrors = probe.errors.length;
    probe = new MeProbe(api, slug, { accessToken: workspace.accessToken, refreshToken: workspace.refreshToken });

    const loadAtStart = loadAverage();
    monitor = new ProcessMonitor(service.pid, 500);
    monitor.start();
    probe.start(ME_RATE);
    log(`posting ${USERS} users (NDJSON, streamed); GET me ${ME_RATE}/s meanwhile; load average ${loadAtStart}`);
    const started = Date.now();
    const posted = await postStream(`${service.url}/v1/${slug}/users/import-jobs`, {
      'content-type': 'application/x-ndjson', authorization: `Bearer ${key}`,
    }, ndjsonBody(USERS, hash));
    const receivedMs = Date.now() - started;
    if (posted.status !== 200) throw new Error(`POST users/import-jobs answered ${posted.status}: ${JSON.stringify(posted.body).slice(0, 300)}`);
    const jobId = posted.body.job.id as string;
    log(`received in ${(receivedMs / 1000).toFixed(1)} s (${(USERS / (receivedMs / 1000)).toFixed(0)} lines/s): job ${jobId} ${posted.body.job.status}, total ${posted.body.job.total}`);

    let job: { status: string; total: number; processed: number; created: number; skipped: number; failed: number } = posted.body.job;
    const loads: number[] = [];
    let lastLog = 0;
    while (job.status !== 'Completed' && job.status !== 'Failed') {
      if (Date.now() - started > LIMIT_MS + 60_000) {
        failures.push(`gave up waiting: ${((Date.now() - started) / 60_000).toFixed(1)} minutes`);
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
      job = (await api.expectOk('GET', `/v1/${slug}/users/import-jobs/${jobId}`, undefined, key)).job ?? job;
      loads.push(Number(loadAverage().split(' ')[0]));
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        const seconds = (Date.now() - started - receivedMs) / 1000;
        log(`${job.status}: ${job.processed} processed (${(job.processed / Math.max(1, seconds)).toFixed(0)} rows/s), load ${loadAverage()}`);
      }
    }
    const wallMs = Date.now() - started;
    await probe.stop();
    const used = monitor.takeWindow();
    const pool = new pg.Client({ connectionString: database.url });
    await pool.connect();
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from app_user where tenant_id = (select id from tenant where slug = $1) and imported_at is not null and deleted_at is null`,
      [slug],
    );
    await pool.end();

    if (job.status !== 'Completed') failures.push(`job ${job.status}`);
    for (const [name, expected] of [['total', USERS], ['processed', USERS], ['created', USERS], ['skipped', 0], ['failed', 0]] as const) {
      if (job[name] !== expected) failures.push(`${name} ${job[name]}, expected ${expected}`);
    }
    if (rows[0]!.n !== USERS) failures.push(`${rows[0]!.n} imported users in the database, expected ${USERS}`);
    if (wallMs > LIMIT_MS) failures.push(`took ${(wallMs / 60_000).toFixed(1)} minutes, limit ${LIMIT_MS / 60_000}`);

    const me = [...probe.latencies].sort((a, b) => a - b);
    const importMs = wallMs - receivedMs;
    const meanLoad = loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : NaN;
    console.log('');
    console.log(`users                 ${USERS} (one shared bcrypt hash, cost 10)`);
    console.log(`wall time             ${(wallMs / 1000).toFixed(1)} s (upload ${(receivedMs / 1000).toFixed(1)} s, import ${(importMs / 1000).toFixed(1)} s)`);
    console.log(`rows/s                ${(USERS / (wallMs / 1000)).toFixed(0)} overall, ${(USERS / (importMs / 1000)).toFixed(0)} while importing`);
    console.log(`job                   ${job.status}: total ${job.total}, processed ${job.processed}, created ${job.created}, skipped ${job.skipped}, failed ${job.failed}`);
    console.log(`imported rows         ${rows[0]!.n}`);
    console.log(`service               ${used.cpuSeconds.toFixed(0)} CPU s (${((used.cpuSeconds * 1000) / USERS).toFixed(2)} ms per user), peak RSS ${(used.peakRssBytes / 1024 / 1024).toFixed(0)} MB`);
    console.log(`machine load          ${loadAtStart} at start, ${meanLoad.toFixed(2)} mean 1-min load while importing, ${loadAverage()} at the end`);
    console.log(`GET me, idle          ${idleMe.length} ok, ${idleErrors} errors; p50 ${quantile(idleMe, 0.5).toFixed(1)} ms, p95 ${quantile(idleMe, 0.95).toFixed(1)} ms, p99 ${quantile(idleMe, 0.99).toFixed(1)} ms, max ${(idleMe.at(-1) ?? NaN).toFixed(1)} ms`);
    console.log(`GET me, importing     ${me.length} ok, ${probe.errors.length} errors; p50 ${quantile(me, 0.5).toFixed(1)} ms, p95 ${quantile(me, 0.95).toFixed(1)} ms, p99 ${quantile(me, 0.99).toFixed(1)} ms, max ${(me.at(-1) ?? NaN).toFixed(1)} ms (${ME_RATE}/s)`);
    if (probe.errors.length) console.log(`GET me errors         ${[...new Set(probe.errors)].slice(0, 5).join('; ')}`);
    if (probe.errors.length > 0) failures.push(`${probe.errors.length} GET me errors`);
    const errorLines = service.logs.filter((l) => /"level":(50|60)/.test(l));
    if (errorLines.length) console.log(`service errors        ${errorLines.length}; last: ${errorLines.at(-1)}`);
    console.log(failures.length ? `\nFAILED: ${failures.join('; ')}` : '\nOK');
    if (failures.length) process.exitCode = 1;
  } finally {
    if (probe) await probe.stop();
    monitor?.stop();
    await service?.stop();
    if (database && values['keep-db']) log(`kept the database ${database.name}`);
    else await database?.drop().catch((err: unknown) => log(`could not drop ${database!.name}: ${String(err)}`));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
