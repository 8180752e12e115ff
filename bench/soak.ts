/**
 * `npm run soak`: the fault soak (docs/operations.md "Fault soak"). Three instances of the service on
 * one PostgreSQL and one Redis of their own, under load for SOAK_SECONDS (default 60): 16 rotating
 * refresh chains sending an Idempotency-Key (5 % of answers are dropped on purpose and retried with
 * the same key), sign-ups, invites and password resets; faults at set seconds: PostgreSQL restart,
 * Redis restart, SIGKILL of one instance (restarted), the webhook receiver answering 503 for 10 s,
 * the SMTP server down for 10 s. Then it drains the job queue and prints the invariants.
 *
 * It never touches the shared servers: PostgreSQL is the separate cluster `SOAK_PG_CLUSTER`
 * (default `15 soak`, port 5433; created with `pg_createcluster 15 soak -p 5433 -- -A trust` when
 * missing) and Redis a redis-server it starts on port 6380. All traffic goes to 127.0.0.1.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { freePort } from './service.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const [PG_VERSION, PG_CLUSTER] = (process.env.SOAK_PG_CLUSTER ?? '15 soak').split(' ') as [string, string];
const PG_PORT = Number(process.env.SOAK_PG_PORT ?? 5433);
const REDIS_PORT = Number(process.env.SOAK_REDIS_PORT ?? 6380);
const CHAINS = 16;
const PASSWORD = 'correct horse battery staple';
if (PG_PORT === 5432 || REDIS_PORT === 6379) throw new Error('the soak restarts its PostgreSQL and Redis: never point it at the shared 5432/6379');

const root = path.resolve(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let t0 = 0;
const now = () => (Date.now() - t0) / 1000;
const log = (msg: string) => console.log(`[${now().toFixed(1).padStart(5)} s] ${msg}`);

// ---------------------------------------------------------------- dependencies
function pgctl(action: 'start' | 'stop'): void {
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, PG_CLUSTER, action], { stdio: 'ignore' });
}

/** Restarts the soak's PostgreSQL without blocking the load (the client keeps sending meanwhile). */
function pgRestart(): Promise<void> {
  return new Promise((resolve) => {
    spawn('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, PG_CLUSTER, 'restart'], { stdio: 'ignore' }).on('exit', () => resolve());
  });
}

async function preparePostgres(): Promise<string> {
  const clusters = execFileSync('pg_lsclusters', ['--no-header'], { encoding: 'utf8' });
  if (!clusters.split('\n').some((l) => l.split(/\s+/)[0] === PG_VERSION && l.split(/\s+/)[1] === PG_CLUSTER)) {
    execFileSync('pg_createcluster', [PG_VERSION, PG_CLUSTER, '-p', String(PG_PORT), '--', '-A', 'trust'], { stdio: 'ignore' });
  }
  if (!/online/.test(execFileSync('pg_lsclusters', [PG_VERSION, PG_CLUSTER, '--no-header'], { encoding: 'utf8' }))) pgctl('start');
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${PG_PORT}/postgres` });
  await admin.connect();
  await admin.query('drop database if exists soak with (force)');
  await admin.query('create database soak');
  await admin.end();
  return `postgres://postgres@127.0.0.1:${PG_PORT}/soak`;
}

let redis: ChildProcess | undefined;
async function startRedis(): Promise<void> {
  redis = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await sleep(300);
}

// ---------------------------------------------------------------- webhook receiver and SMTP sink
const deliveries = new Map<string, { bodies: Set<string>; count: number; eventId: string | undefined }>();
let badSignatures = 0;
let receiverDownUntil = 0;
let firstDeliveryAfterOutage: number | undefined;
let webhookSecret = '';
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (Date.now() < receiverDownUntil) return void res.writeHead(503).end();
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      new Webhook(webhookSecret).verify(body, req.headers as Record<string, string>);
    } catch {
      badSignatures += 1;
    }
    const id = String(req.headers['webhook-id']);
    let eventId: string | undefined;
    try {
      eventId = (JSON.parse(body) as { data?: { id?: string } }).data?.id;
    } catch {
      badSignatures += 1; // not even JSON: counted with the deliveries that do not verify
    }
    const seen = deliveries.get(id) ?? { bodies: new Set<string>(), count: 0, eventId };
    seen.bodies.add(createHash('sha256').update(body).digest('hex'));
    seen.count += 1;
    deliveries.set(id, seen);
    if (receiverDownUntil > 0 && firstDeliveryAfterOutage === undefined) firstDeliveryAfterOutage = Date.now();
    res.writeHead(204).end();
  });
});

const mailsTo = new Map<string, number>();
let smtpBackAt = 0;
let firstMailAfterOutage: number | undefined;
function smtpServer(): SMTPServer {
  return new SMTPServer({
    secure: false, authOptional: true, disabledCommands: ['STARTTLS'], logger: false, closeTimeout: 100,
    onData(stream, session, cb) {
      stream.resume();
      stream.on('end', () => {
        for (const r of session.envelope.rcptTo) mailsTo.set(r.address.toLowerCase(), (mailsTo.get(r.address.toLowerCase()) ?? 0) + 1);
        if (smtpBackAt > 0 && firstMailAfterOutage === undefined) firstMailAfterOutage = Date.now();
        cb();
      });
    },
  });
}

// ---------------------------------------------------------------- instances
interface Instance {
  port: number;
  child: ChildProcess;
  up: boolean;
}
const instances: Instance[] = [];
let baseEnv: Record<string, string> = {};

function spawnInstance(port: number): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root, stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...baseEnv, PORT: String(port), DATA_DIR: mkdtempSync(path.join(tmpdir(), 'soak-')) },
  });
  return child;
}

async function waitHealthy(port: number, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`instance on ${port} did not start`);
}

// ---------------------------------------------------------------- client side
interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}
const responses: { t: number; status: number; what: string }[] = [];
let rr = 0;

/** Sends to the next live instance (round robin); a refused connection is a network error (thrown). */
async function call(what: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const live = instances.filter((i) => i.up);
  const target = live[rr++ % live.length]!;
  const res = await fetch(`http://127.0.0.1:${target.port}${url}`, {
    method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  responses.push({ t: now(), status: res.status, what });
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

/** Retries a request that failed on the network or with 5xx/429 (the same request, e.g. the same Idempotency-Key). */
async function withRetries(send: () => Promise<Answer>, attempts = 40): Promise<Answer | undefined> {
  for (let i = 0; i < attempts && !stopping; i++) {
    try {
      const res = await send();
      if (res.status < 500 && res.status !== 429) return res;
      const retryAfter = Number(res.headers.get('retry-after') ?? 1);
      await sleep(Math.min(retryAfter * 1000, 1000));
    } catch {
      await sleep(250);
    }
  }
  return undefined;
}

let stopping = false;
const stats = { refreshes: 0, droppedOnPurpose: 0, honouredTwice: 0, chainsEnded: 0, chainEndReasons: [] as string[], signups: 0, invites: 0, resets: 0 };
const successorOf = new Map<string, string>();
const expectedMails = new Map<string, number>();
let slug = '';
let adminToken = '';
const members: string[] = [];

async function newChainSession(): Promise<string | undefined> {
  const email = `chain-${randomUUID().slice(0, 8)}@soak.test`;
  const res = await withRetries(() => call('signup', 'POST', `/v1/${slug}/auth/signup`, { email, password: PASSWORD }));
  return res?.status === 200 ? String(res.body.refreshToken) : undefined;
}

async function chain(): Promise<void> {
  let pendingKey: { token: string; key: string } | undefined;
  let token = await newChainSession();
  while (!stopping) {
    if (!token) {
      token = await newChainSession();
      continue;
    }
    const presented = token;
    // One key per logical refresh: kept until this token's refresh is answered, however many tries.
    if (pendingKey?.token !== presented) pendingKey = { token: presented, key: randomUUID() };
    const { key } = pendingKey;
    let answer: Answer | undefined;
    for (let attempt = 0; attempt < 60 && !stopping && !answer; attempt++) {
      try {
        const res = await call('refresh', 'POST', `/v1/${slug}/auth/refresh`, { refreshToken: presented }, { 'idempotency-key': key });
        if (res.status === 200 && attempt === 0 && Math.random() < 0.05) {
          stats.droppedOnPurpose += 1; // the answer is "lost": retry with the same key
          continue;
        }
        if (res.status < 500 && res.status !== 429) answer = res;
        else await sleep(Math.min(Number(res.headers.get('retry-after') ?? 1) * 1000, 1000));
      } catch {
        await sleep(250);
      }
    }
    if (!answer) continue;
    if (answer.status !== 200) {
      stats.chainsEnded += 1;
      stats.chainEndReasons.push(String((answer.body.details as { reason?: string } | undefined)?.reason ?? answer.status));
      token = undefined;
      continue;
    }
    stats.refreshes += 1;
    const successor = String(answer.body.refreshToken);
    const known = successorOf.get(presented);
    if (known !== undefined && known !== successor) stats.honouredTwice += 1;
    successorOf.set(presented, successor);
    token = successor;
    await sleep(50);
  }
}

async function accounts(): Promise<void> {
  while (!stopping) {
    const email = `member-${randomUUID().slice(0, 8)}@soak.test`;
    const signup = await withRetries(() => call('signup', 'POST', `/v1/${slug}/auth/signup`, { email, password: PASSWORD }));
    if (signup?.status === 200) {
      stats.signups += 1;
      members.push(email);
    }
    const invitee = `invitee-${randomUUID().slice(0, 8)}@soak.test`;
    const invite = await withRetries(() =>
      call('invite', 'POST', `/v1/${slug}/invites`, { email: invitee, role: 'Member' }, { authorization: `Bearer ${adminToken}` }),
    );
    if (invite?.status === 200) {
      stats.invites += 1;
      expectedMails.set(invitee, (expectedMails.get(invitee) ?? 0) + 1);
    }
    const who = members[Math.floor(Math.random() * members.length)];
    if (who) {
      const reset = await withRetries(() => call('reset', 'POST', `/v1/${slug}/auth/password-reset/request`, { email: who }));
      if (reset?.status === 200) {
        stats.resets += 1;
        expectedMails.set(who, (expectedMails.get(who) ?? 0) + 1);
      }
    }
    await sleep(100);
  }
}

// ---------------------------------------------------------------- faults
interface Fault {
  name: string;
  at: number;
  /** Seconds the fault itself lasts (0: a single act). */
  duration: number;
  run: () => Promise<void>;
  /** Resolves when the service has recovered, with the time (epoch ms). */
  recovered: () => Promise<number>;
  start?: number;
  recoveredAt?: number;
}

async function allReady(): Promise<number> {
  for (;;) {
    const states = await Promise.all(
      instances.filter((i) => i.up).map((i) => fetch(`http://127.0.0.1:${i.port}/ready`).then((r) => r.status === 200, () => false)),
    );
    if (states.every(Boolean)) return Date.now();
    await sleep(100);
  }
}

async function waitFor(probe: () => number | undefined): Promise<number> {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
}

let smtp = smtpServer();
let smtpPort = 0;
const faults: Fault[] = [
  { name: 'PostgreSQL restart', at: 8, duration: 0, run: pgRestart, recovered: allReady },
  {
    name: 'Redis restart', at: 18, duration: 0,
    run: async () => {
      redis?.kill('SIGTERM');
      await sleep(1000);
      await startRedis();
    },
    recovered: allReady,
  },
  {
    name: 'SIGKILL of one instance', at: 26, duration: 0,
    run: async () => {
      const victim = instances[2]!;
      victim.up = false;
      victim.child.kill('SIGKILL');
      await sleep(2000);
      victim.child = spawnInstance(victim.port);
      await waitHealthy(victim.port);
      victim.up = true;
    },
    recovered: async () => Date.now(),
  },
  {
    name: 'webhook receiver 503 for 10 s', at: 34, duration: 10,
    run: async () => {
      receiverDownUntil = Date.now() + 10_000;
    },
    recovered: () => waitFor(() => firstDeliveryAfterOutage),
  },
  {
    name: 'SMTP server down for 10 s', at: 46, duration: 10,
    run: async () => {
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await sleep(10_000);
      smtp = smtpServer();
      await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', () => resolve()));
      smtpBackAt = Date.now();
    },
    recovered: () => waitFor(() => firstMailAfterOutage),
  },
];

// ---------------------------------------------------------------- run
async function main(): Promise<void> {
  const databaseUrl = await preparePostgres();
  await startRedis();
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  smtpPort = await freePort();
  await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', () => resolve()));
  baseEnv = {
    NODE_ENV: 'production', DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: '8', REDIS_URL: `redis://127.0.0.1:${REDIS_PORT}`,
    REDIS_KEY_PREFIX: `soak-${randomUUID().slice(0, 8)}`, SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, JWT_SECRET: 'soak-jwt-secret-0123456789-0123456789-0123456789',
    ENCRYPTION_KEYS: `v1:${Buffer.alloc(32, 9).toString('base64')}`, PUBLIC_URL: 'http://127.0.0.1:3000', HOST: '127.0.0.1',
    RATE_LIMIT_SCALE: '1000', INVITES_PER_TENANT_PER_DAY: '1000000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'error',
    JOB_POLL_INTERVAL_MS: '200', JOB_RETRY_BASE_SECONDS: '1', JOB_QUEUE: 'soak',
  };
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    instances.push({ port, child: spawnInstance(port), up: false });
    if (i === 0) await waitHealthy(port); // the first applies the migrations
  }
  await Promise.all(instances.map(async (i) => {
    await waitHealthy(i.port);
    i.up = true;
  }));
  t0 = Date.now();
  const tenant = await call('setup', 'POST', '/v1/tenants', { tenant: { name: 'Soak' }, admin: { email: 'admin@soak.test', password: PASSWORD } });
  slug = String(tenant.body.tenantSlug);
  adminToken = String(tenant.body.accessToken);
  const hook = await call('setup', 'POST', `/v1/${slug}/webhooks`, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in` }, { authorization: `Bearer ${adminToken}` });
  webhookSecret = String(hook.body.secret);
  const hookCreatedAt = new Date();

  t0 = Date.now();
  log(`load for ${SECONDS} s on 3 instances (${instances.map((i) => i.port).join(', ')}), PostgreSQL :${PG_PORT}, Redis :${REDIS_PORT}`);
  const load = [...Array.from({ length: CHAINS }, () => chain()), accounts(), accounts()];
  const faultRuns = faults.map(async (fault) => {
    await sleep(fault.at * 1000);
    fault.start = Date.now();
    log(`fault: ${fault.name}`);
    await fault.run();
    fault.recoveredAt = await Promise.race([fault.recovered(), sleep(90_000).then(() => undefined)]);
    log(fault.recoveredAt === undefined ? `NOT recovered within 90 s: ${fault.name}` : `recovered: ${fault.name} after ${((fault.recoveredAt - fault.start) / 1000).toFixed(1)} s`);
  });
  await sleep(SECONDS * 1000);
  stopping = true;
  await Promise.all(load);
  await Promise.all(faultRuns);

  log('draining the job queue');
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const drainUntil = Date.now() + 90_000;
  for (;;) {
    const { rows } = await db.query<{ n: string }>(`select count(*) as n from job where failed_at is null`);
    if (Number(rows[0]!.n) === 0 || Date.now() > drainUntil) break;
    await sleep(500);
  }
  await sleep(1000);
  const events = await db.query<{ id: string }>('select id from audit_event where tenant_id = (select id from tenant where slug = $1) and created_at >= $2', [slug, hookCreatedAt]);
  const failedJobs = await db.query<{ kind: string; n: string }>('select kind, count(*) as n from job where failed_at is not null group by kind');
  const attempting = await db.query<{ n: string }>(`select count(*) as n from webhook_delivery where outcome = 'attempting'`);
  await db.end();

  // ---------------------------------------------------------------- invariants
  const receivedEvents = new Set([...deliveries.values()].map((d) => d.eventId));
  const lostEvents = events.rows.filter((e) => !receivedEvents.has(e.id)).length;
  const twoBodies = [...deliveries.values()].filter((d) => d.bodies.size > 1).length;
  const deliveredTwice = [...deliveries.values()].filter((d) => d.count > 1).length;
  let mailsExpected = 0;
  let mailsMissing = 0;
  let mailsExtra = 0;
  for (const [to, n] of expectedMails) {
    mailsExpected += n;
    const got = mailsTo.get(to) ?? 0;
    if (got < n) mailsMissing += n - got;
    if (got > n) mailsExtra += got - n;
  }
  const windows = faults.map((f) => [(f.start! - t0) / 1000, ((f.recoveredAt ?? Date.now()) - t0) / 1000 + 2] as const);
  const inWindow = (t: number) => windows.some(([a, b]) => t >= a && t <= b);
  const fiveXX = responses.filter((r) => r.status >= 500);
  const outside = fiveXX.filter((r) => !inWindow(r.t));
  const byStatus = (list: typeof responses) => Object.entries(list.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {}));

  console.log('\n== fault soak invariants ==');
  console.log(`requests: ${responses.length}; refreshes ${stats.refreshes} (answers dropped on purpose and retried with the same key: ${stats.droppedOnPurpose}), sign-ups ${stats.signups}, invites ${stats.invites}, resets ${stats.resets}`);
  console.log(`events delivered: ${events.rows.length - lostEvents} of ${events.rows.length} (lost ${lostEvents}; bad signatures ${badSignatures}; ids with two bodies ${twoBodies}; ids delivered more than once ${deliveredTwice}; log rows left attempting ${attempting.rows[0]!.n})`);
  console.log(`mails sent: ${mailsExpected - mailsMissing} of ${mailsExpected} (missing ${mailsMissing}, extra ${mailsExtra})`);
  console.log(`refresh tokens honoured twice: ${stats.honouredTwice}; chains ended: ${stats.chainsEnded} ${JSON.stringify(stats.chainEndReasons)}`);
  console.log(`5xx: ${fiveXX.length} (${JSON.stringify(byStatus(fiveXX))}), outside fault windows: ${outside.length}; 500s: ${responses.filter((r) => r.status === 500).length}`);
  console.log(`jobs failed for good: ${JSON.stringify(failedJobs.rows)}`);
  for (const f of faults) {
    console.log(`recovery: ${f.name}: ${f.recoveredAt === undefined ? 'not within 90 s' : `${((f.recoveredAt - f.start!) / 1000).toFixed(1)} s after the fault began`}`);
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    stopping = true;
    for (const i of instances) i.child.kill('SIGTERM');
    redis?.kill('SIGTERM');
    receiver.close();
    smtp.close(() => undefined);
    await sleep(1000);
    try {
      pgctl('stop');
    } catch {
      // already stopped
    }
    process.exit();
  });
