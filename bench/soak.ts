/**
 * `npm run soak`: the fault soak, a test that passes or fails (docs/operations.md "Fault soak").
 *
 * Three instances of the built service (`dist/src/main.js`, heap-capped as `npm start` runs it) on a
 * PostgreSQL cluster and a Redis of their own, under load for SOAK_SECONDS (default 60, at least 40):
 * 16 rotating refresh chains sending an Idempotency-Key (about 5 % of answers are read, kept, then
 * treated as lost and the refresh retried with the same key: the retry must give the identical
 * answer), two account workers (sign-ups, invites, password resets: every mail they cause is
 * expected), and an over-budget client that keeps calling `invites/accept` from one address. Faults:
 * PostgreSQL stopped for 4 s, Redis stopped for 4 s, one instance SIGKILLed and started again, the
 * webhook receiver answering 503 for 5 s, the SMTP server down for 5 s. Then it drains the job queue,
 * checks every invariant, prints each with what was expected and what was observed, and exits 1 when
 * any failed (2 when the soak itself could not run).
 *
 * It never touches the shared servers: PostgreSQL is the cluster `SOAK_PG_CLUSTER` (default `15 soak`,
 * port SOAK_PG_PORT 5433, created with `pg_createcluster` when missing, stopped at the end) and Redis
 * a redis-server it starts on SOAK_REDIS_PORT (6380). Everything it records (the instances' logs, every
 * request and mail, the report as JSON) is kept in SOAK_OUT (default a new `soak-*` directory in the
 * temporary directory). SOAK_BREAK=replay makes the client retry lost answers with a new key, which
 * the service must treat as a replay: a way to see the soak fail.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { simpleParser } from 'mailparser';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { freePort } from './service.js';

const SECONDS = Math.max(40, Number(process.env.SOAK_SECONDS ?? 60));
const [PG_VERSION, PG_CLUSTER] = (process.env.SOAK_PG_CLUSTER ?? '15 soak').split(' ') as [string, string];
const PG_PORT = Number(process.env.SOAK_PG_PORT ?? 5433);
const REDIS_PORT = Number(process.env.SOAK_REDIS_PORT ?? 6380);
const BREAK = process.env.SOAK_BREAK;
/**
 * Latency bounds for answers outside every fault window (ms): loose, since a shared 2-core machine
 * can be slow; they catch what hangs (a pool that does not recover waits 10 s per request).
 */
const P99_LIMIT_MS = Number(process.env.SOAK_P99_MS ?? 5000);
const MAX_LIMIT_MS = Number(process.env.SOAK_MAX_MS ?? 10000);
/** Seconds within which every load worker must succeed again once a fault ended. */
const RECOVERY_LIMIT_S = 10;
const CHAINS = 16;
const PASSWORD = 'correct horse battery staple';
/** ACCOUNT_CREATION_PER_IP (src/services/rate-limits/rate-limit-rules.ts): 20 per hour per client IP. */
const ACCEPT_BUDGET = 20;
/** Jobs one worker runs at the same time (src/services/jobs/job-worker.ts): what a killed instance can leave mid-run. */
const WORKER_CONCURRENCY = 5;
const ABUSER_IP = '10.255.255.1';
if (PG_PORT === 5432 || REDIS_PORT === 6379) throw new Error('the soak stops its PostgreSQL and Redis: never point it at the shared 5432/6379');

const root = path.resolve(import.meta.dirname, '..');
const OUT = process.env.SOAK_OUT ?? mkdtempSync(path.join(tmpdir(), `soak-${new Date().toISOString().replace(/[:.]/g, '-')}-`));
mkdirSync(OUT, { recursive: true });
// A SOAK_OUT kept between runs (CI) holds the last run's records only.
for (const name of readdirSync(OUT)) if (/^(instance-.*\.log|redis\.log|report\.json|requests\.jsonl|mails\.jsonl)$/.test(name)) unlinkSync(path.join(OUT, name));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
let t0 = Date.now();
/** Seconds since the load began. */
const now = () => (Date.now() - t0) / 1000;
const log = (msg: string) => console.log(`[${now().toFixed(1).padStart(5)} s] ${msg}`);

// ---------------------------------------------------------------- dependencies
/** Runs pg_ctlcluster without blocking the event loop (the load keeps going meanwhile). */
function pgctl(action: 'start' | 'stop'): Promise<void> {
  return new Promise((resolve, reject) => {
    spawn('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, PG_CLUSTER, action], { stdio: 'ignore' }).on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`pg_ctlcluster ${action} exited with ${code}`)),
    );
  });
}

function clusterLine(): string[] | undefined {
  const lines = execFileSync('pg_lsclusters', ['--no-header'], { encoding: 'utf8' }).split('\n').map((l) => l.trim().split(/\s+/));
  return lines.find((l) => l[0] === PG_VERSION && l[1] === PG_CLUSTER);
}

async function preparePostgres(): Promise<string> {
  let line = clusterLine();
  if (!line) {
    execFileSync('pg_createcluster', [PG_VERSION, PG_CLUSTER, '-p', String(PG_PORT), '--', '-A', 'trust'], { stdio: 'ignore' });
    line = clusterLine();
  }
  if (line?.[2] !== String(PG_PORT)) throw new Error(`cluster ${PG_VERSION} ${PG_CLUSTER} listens on ${line?.[2]}, not ${PG_PORT}`);
  if (line[3] !== 'online') await pgctl('start');
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${PG_PORT}/postgres` });
  await admin.connect();
  await admin.query('drop database if exists soak with (force)');
  await admin.query('create database soak');
  await admin.end();
  return `postgres://postgres@127.0.0.1:${PG_PORT}/soak`;
}

const REDIS_PIDFILE = path.join(tmpdir(), `soak-redis-${REDIS_PORT}.pid`);
let redis: ChildProcess | undefined;

/** Stops a redis-server a previous soak on this port left behind (found by its pid file). */
async function stopStaleRedis(): Promise<void> {
  if (!existsSync(REDIS_PIDFILE)) return;
  const pid = Number(readFileSync(REDIS_PIDFILE, 'utf8').trim());
  const comm = (() => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8');
    } catch {
      return '';
    }
  })();
  if (comm.startsWith('redis-server')) {
    process.kill(pid, 'SIGKILL');
    await sleep(300);
  }
  unlinkSync(REDIS_PIDFILE);
}

async function startRedis(): Promise<void> {
  const out = openSync(path.join(OUT, 'redis.log'), 'a');
  redis = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--pidfile', REDIS_PIDFILE], {
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  for (let i = 0; i < 50; i++) {
    try {
      execFileSync('redis-cli', ['-p', String(REDIS_PORT), 'ping'], { stdio: 'ignore' });
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`redis-server on ${REDIS_PORT} did not start (see ${OUT}/redis.log)`);
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

// ---------------------------------------------------------------- webhook receiver and SMTP sink
interface Delivery {
  times: number[];
  bodies: Set<string>;
  eventId: string | undefined;
}
const deliveries = new Map<string, Delivery>();
let badSignatures = 0;
let receiverDownUntil = 0;
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
    const seen = deliveries.get(id) ?? { times: [], bodies: new Set<string>(), eventId };
    seen.bodies.add(createHash('sha256').update(body).digest('hex'));
    seen.times.push(now());
    deliveries.set(id, seen);
    res.writeHead(204).end();
  });
});

/** One mail the SMTP sink accepted. */
interface Mail {
  t: number;
  to: string;
  subject: string;
  messageId: string;
}
const mails: Mail[] = [];
function smtpServer(): SMTPServer {
  return new SMTPServer({
    secure: false, authOptional: true, disabledCommands: ['STARTTLS'], logger: false, closeTimeout: 100,
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (parsed) => {
          for (const r of session.envelope.rcptTo) {
            mails.push({ t: now(), to: r.address.toLowerCase(), subject: parsed.subject ?? '', messageId: parsed.messageId ?? '' });
          }
          cb();
        },
        (err: Error) => cb(err),
      );
    },
  });
}

// ---------------------------------------------------------------- instances
interface Instance {
  index: number;
  port: number;
  metricsPort: number;
  child: ChildProcess;
  up: boolean;
  logs: string[];
}
const instances: Instance[] = [];
let baseEnv: Record<string, string> = {};

/** Starts the built service (as `npm start` runs it, heap limit included), its output to a log file of its own. */
function spawnInstance(index: number, port: number, metricsPort: number, generation: number): { child: ChildProcess; log: string } {
  const log = path.join(OUT, `instance-${index}${generation > 0 ? `-restart-${generation}` : ''}.log`);
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: root, stdio: ['ignore', out, out],
    env: { ...process.env, ...baseEnv, PORT: String(port), METRICS_PORT: String(metricsPort), DATA_DIR: mkdtempSync(path.join(tmpdir(), 'soak-data-')) },
  });
  closeSync(out);
  return { child, log };
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

/** `idp_rate_limit_fallback_decisions_total` of one instance (undefined when its metrics do not answer). */
async function fallbackDecisions(instance: Instance): Promise<number | undefined> {
  const text = await fetch(`http://127.0.0.1:${instance.metricsPort}/metrics`).then((r) => r.text(), () => undefined);
  const match = text && /^idp_rate_limit_fallback_decisions_total\s+(\d+(?:\.\d+)?)/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

// ---------------------------------------------------------------- client side
interface Answer {
  status: number;
  text: string;
  body: Record<string, unknown>;
  headers: Headers;
}
/** One request as the client saw it; `status` 0 is a network error (refused, reset, timed out). */
interface Sent {
  what: string;
  client: 'load' | 'abuser';
  port: number;
  sent: number;
  done: number;
  status: number;
  retryAfter: string | null;
  reason?: string;
  error?: string;
}
const requests: Sent[] = [];
let rr = 0;

/** A client address of the load: a new one per request, so no legitimate request meets a per-IP budget. */
const randomIp = () => `10.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

/**
 * Sends to the next live instance (round robin) as client address `ip` (X-Forwarded-For; the
 * instances trust loopback as their proxy). A network error is recorded and thrown.
 */
async function call(what: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}, ip = randomIp(), client: Sent['client'] = 'load'): Promise<Answer> {
  const live = instances.filter((i) => i.up);
  const target = live[rr++ % live.length]!;
  const entry: Sent = { what, client, port: target.port, sent: now(), done: 0, status: 0, retryAfter: null };
  requests.push(entry);
  try {
    const res = await fetch(`http://127.0.0.1:${target.port}${url}`, {
      method, headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    entry.done = now();
    entry.status = res.status;
    entry.retryAfter = res.headers.get('retry-after');
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { unparsable: text.slice(0, 200) };
    }
    const reason = (parsed.details as { reason?: unknown } | undefined)?.reason;
    if (res.status >= 400 && typeof reason === 'string') entry.reason = reason;
    return { status: res.status, text, body: parsed, headers: res.headers };
  } catch (err) {
    entry.done = now();
    entry.error = err instanceof Error ? `${err.name}: ${(err.cause as Error | undefined)?.message ?? err.message}` : String(err);
    throw err;
  }
}

let stopping = false;

/** Retries a request that failed on the network or with 5xx/429 (the same request, e.g. the same Idempotency-Key). */
async function withRetries(send: () => Promise<Answer>, attempts = 60): Promise<{ answer: Answer | undefined; ambiguous: number }> {
  let ambiguous = 0;
  for (let i = 0; i < attempts && !stopping; i++) {
    try {
      const res = await send();
      if (res.status < 500 && res.status !== 429) return { answer: res, ambiguous };
      if (res.status >= 500) ambiguous += 1;
      await sleep(Math.min(Number(res.headers.get('retry-after') ?? 1) * 1000, 1000));
    } catch {
      ambiguous += 1;
      await sleep(250);
    }
  }
  return { answer: undefined, ambiguous };
}

/** Times (s) at which each load worker got a success: what "progress" means. */
const progress = new Map<string, number[]>();
const progressed = (worker: string) => progress.get(worker)!.push(now());
const stats = { refreshes: 0, signups: 0, invites: 0, resets: 0 };
/** A refresh answer read in full, then treated as lost, and what the retry with the same key gave. */
interface DroppedAnswer {
  chain: number;
  at: number;
  original: Record<string, unknown>;
  retryStatus: number | undefined;
  retry: Record<string, unknown> | undefined;
  identical: boolean;
}
const dropped: DroppedAnswer[] = [];
const chainEnds: { chain: number; at: number; status: number; reason: string }[] = [];
/** Mails the account workers caused, per recipient: `sure` (answered 200) and `maybe` (answered 503 or lost, may have committed). */
const expectedMails = new Map<string, { sure: number; maybe: number; answered: number[]; requests: string[] }>();
let slug = '';
let adminToken = '';
const members: string[] = [];

function expectMail(to: string, what: string, answer: Answer | undefined, ambiguous: number): void {
  const entry = expectedMails.get(to) ?? { sure: 0, maybe: 0, answered: [], requests: [] };
  if (answer?.status === 200) {
    entry.sure += 1;
    entry.answered.push(now());
  }
  entry.maybe += ambiguous;
  entry.requests.push(`${what} at ${now().toFixed(1)} s: ${answer?.status ?? 'no answer'}${ambiguous ? ` after ${ambiguous} answer(s) lost or 503` : ''}`);
  expectedMails.set(to, entry);
}

async function newChainSession(worker: string): Promise<string | undefined> {
  const email = `chain-${randomUUID().slice(0, 8)}@soak.test`;
  const { answer } = await withRetries(() => call('signup', 'POST', `/v1/${slug}/auth/signup`, { email, password: PASSWORD }));
  if (answer?.status !== 200) return undefined;
  progressed(worker);
  return String(answer.body.refreshToken);
}

/** One refresh attempt loop with one key: the first answer that is neither 5xx nor 429 nor lost. */
async function refreshOnce(presented: string, key: string): Promise<Answer | undefined> {
  for (let attempt = 0; attempt < 80 && !stopping; attempt++) {
    try {
      const res = await call('refresh', 'POST', `/v1/${slug}/auth/refresh`, { refreshToken: presented }, { 'idempotency-key': key });
      if (res.status < 500 && res.status !== 429) return res;
      await sleep(Math.min(Number(res.headers.get('retry-after') ?? 1) * 1000, 1000));
    } catch {
      await sleep(250);
    }
  }
  return undefined;
}

async function chain(n: number): Promise<void> {
  const worker = `chain ${n}`;
  progress.set(worker, []);
  let token = await newChainSession(worker);
  // One key per logical refresh, kept until this token's refresh is answered, however many tries.
  let pending: { token: string; key: string } | undefined;
  while (!stopping) {
    if (!token) {
      token = await newChainSession(worker);
      continue;
    }
    if (pending?.token !== token) pending = { token, key: randomUUID() };
    let answer = await refreshOnce(token, pending.key);
    if (answer?.status === 200 && Math.random() < 0.05) {
      // The answer was read in full and is now "lost": the client retries with the same key (a new one
      // under SOAK_BREAK=replay) and must get the identical answer, then continues with the retry's.
      const original = answer.body;
      const retry = await refreshOnce(token, BREAK === 'replay' ? randomUUID() : pending.key);
      if (stopping && !retry) break;
      dropped.push({ chain: n, at: now(), original, retryStatus: retry?.status, retry: retry?.body, identical: retry?.status === 200 && isDeepStrictEqual(retry.body, original) });
      answer = retry;
    }
    if (!answer) continue;
    if (answer.status !== 200) {
      chainEnds.push({ chain: n, at: now(), status: answer.status, reason: String((answer.body.details as { reason?: string } | undefined)?.reason ?? '') });
      token = undefined;
      continue;
    }
    stats.refreshes += 1;
    progressed(worker);
    token = String(answer.body.refreshToken);
    await sleep(50);
  }
}

async function accounts(n: number): Promise<void> {
  const worker = `accounts ${n}`;
  progress.set(worker, []);
  while (!stopping) {
    const email = `member-${randomUUID().slice(0, 8)}@soak.test`;
    const signup = await withRetries(() => call('signup', 'POST', `/v1/${slug}/auth/signup`, { email, password: PASSWORD }));
    if (signup.answer?.status === 200) {
      stats.signups += 1;
      members.push(email);
      progressed(worker);
    }
    const invitee = `invitee-${randomUUID().slice(0, 8)}@soak.test`;
    const invite = await withRetries(() => call('invite', 'POST', `/v1/${slug}/invites`, { email: invitee, role: 'Member' }, { authorization: `Bearer ${adminToken}` }));
    if (invite.answer?.status === 200) {
      stats.invites += 1;
      progressed(worker);
    }
    if (invite.answer || invite.ambiguous) expectMail(invitee, 'invite', invite.answer, invite.ambiguous);
    const who = members[Math.floor(Math.random() * members.length)];
    if (who) {
      const reset = await withRetries(() => call('reset', 'POST', `/v1/${slug}/auth/password-reset/request`, { email: who }));
      if (reset.answer?.status === 200) {
        stats.resets += 1;
        progressed(worker);
      }
      if (reset.answer || reset.ambiguous) expectMail(who, 'reset', reset.answer, reset.ambiguous);
    }
    await sleep(100);
  }
}

/** The over-budget client: `invites/accept` with a made-up token from one address, about 30 times a second. */
async function abuser(): Promise<void> {
  // Past the budget at once, so the shared limit refuses some before any fault, however slow the machine.
  await abuserBurst(ACCEPT_BUDGET + 10, 3);
  while (!stopping) {
    await call('accept (over budget)', 'POST', '/v1/invites/accept', { token: 'soak-made-up-invite-token-0123456789abcdef', password: PASSWORD }, {}, ABUSER_IP, 'abuser').catch(() => undefined);
    await sleep(30);
  }
}

/** `count` requests of the over-budget client, `concurrency` at a time. */
async function abuserBurst(count: number, concurrency: number): Promise<void> {
  let left = count;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (left-- > 0) {
      await call('accept (over budget)', 'POST', '/v1/invites/accept', { token: 'soak-made-up-invite-token-0123456789abcdef', password: PASSWORD }, {}, ABUSER_IP, 'abuser').catch(() => undefined);
    }
  }));
}

// ---------------------------------------------------------------- faults
interface Fault {
  name: string;
  kind: 'postgres' | 'redis' | 'kill' | 'webhook' | 'smtp';
  /** Second of the run at which it begins. */
  at: number;
  /** Does the fault itself, resolving when it is over (the dependency is started again). */
  run: () => Promise<void>;
  /** Resolves with the second at which the service has recovered. */
  recovered: () => Promise<number>;
  start?: number;
  end?: number;
  recoveredAt?: number;
}

async function allReady(): Promise<number> {
  for (;;) {
    const states = await Promise.all(
      instances.filter((i) => i.up).map((i) => fetch(`http://127.0.0.1:${i.port}/ready`).then((r) => r.status === 200, () => false)),
    );
    if (states.every(Boolean)) return now();
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
let killedAt: number | undefined;
let killedPort = 0;
let killedLogFile = '';
const fallbackAfterRedis = new Map<number, number | undefined>();
const faults: Fault[] = [
  {
    name: 'PostgreSQL stopped for 4 s', kind: 'postgres', at: 3,
    run: async () => {
      await pgctl('stop');
      await sleep(4000);
      await pgctl('start');
    },
    recovered: allReady,
  },
  {
    name: 'Redis stopped for 4 s', kind: 'redis', at: 11,
    run: async () => {
      await stopRedis();
      const stopped = Date.now();
      // More than 3 × the budget at once, so whatever the machine's load the fallback must refuse some.
      await abuserBurst(3 * ACCEPT_BUDGET + 30, 6);
      await sleep(Math.max(0, 4000 - (Date.now() - stopped)));
      for (const i of instances.filter((x) => x.up)) fallbackAfterRedis.set(i.index, await fallbackDecisions(i));
      await startRedis();
    },
    recovered: async () => {
      const at = await allReady();
      // Past the budget again once Redis counts (from zero), however slow the machine.
      void abuserBurst(ACCEPT_BUDGET + 10, 3);
      return at;
    },
  },
  {
    name: 'SIGKILL of one instance, started again', kind: 'kill', at: 19,
    run: async () => {
      const victim = instances[2]!;
      victim.up = false;
      killedAt = now();
      killedPort = victim.port;
      killedLogFile = victim.logs.at(-1)!;
      victim.child.kill('SIGKILL');
      await sleep(1000);
      const started = spawnInstance(victim.index, victim.port, victim.metricsPort, victim.logs.length);
      victim.child = started.child;
      victim.logs.push(started.log);
      await waitHealthy(victim.port);
      victim.up = true;
    },
    recovered: async () => now(),
  },
  {
    name: 'webhook receiver answering 503 for 5 s', kind: 'webhook', at: 19,
    run: async () => {
      receiverDownUntil = Date.now() + 5000;
      await sleep(5000);
    },
    recovered: () => waitFor(() => [...deliveries.values()].flatMap((d) => d.times).find((t) => t >= faults[3]!.end!)),
  },
  {
    name: 'SMTP server down for 5 s', kind: 'smtp', at: 26,
    run: async () => {
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await sleep(5000);
      smtp = smtpServer();
      await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', () => resolve()));
    },
    recovered: () => waitFor(() => mails.find((m) => m.t >= faults[4]!.end!)?.t),
  },
];

// ---------------------------------------------------------------- invariants
interface Check {
  name: string;
  expected: string;
  observed: string;
  pass: boolean;
  /** Lines that explain a failure (or an allowed exception): ids, times, log lines. */
  details?: string[];
}
const checks: Check[] = [];
const check = (name: string, expected: string, observed: string, pass: boolean, details?: string[]) => checks.push({ name, expected, observed, pass, details });

const allLogs = () => instances.flatMap((i) => i.logs);
/** Lines of the instances' logs that mention `needle`, prefixed with their file's name. */
function logLines(needle: string, limit = 6): string[] {
  const found: string[] = [];
  for (const file of allLogs()) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.includes(needle)) found.push(`${path.basename(file)}: ${line.slice(0, 400)}`);
      if (found.length >= limit) return found;
    }
  }
  return found;
}

const fmt = (n: number) => n.toFixed(1);
const percentile = (values: number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** A fault's window for answers: from its start to 2 s after the service recovered. */
const window = (f: Fault) => [f.start!, (f.recoveredAt ?? f.end ?? Infinity) + 2] as const;
const overlaps = (r: Sent, [a, b]: readonly [number, number]) => r.sent <= b && r.done >= a;

function judgeAnswers(): void {
  const pgFault = faults.find((f) => f.kind === 'postgres')!;
  const pgWindow = window(pgFault);
  const load = requests.filter((r) => r.client === 'load');
  const all = requests;
  const fiveHundreds = all.filter((r) => r.status >= 500 && r.status !== 503);
  check('no 500 (or any 5xx but 503), faults or not', '0', String(fiveHundreds.length), fiveHundreds.length === 0,
    fiveHundreds.slice(0, 10).map((r) => `${r.what} → ${r.status} ${r.reason ?? ''} at ${fmt(r.sent)} s on :${r.port}`));
  const s503 = all.filter((r) => r.status === 503);
  const misplaced = s503.filter((r) => !overlaps(r, pgWindow));
  check('503 only while PostgreSQL is away', `0 outside ${fmt(pgWindow[0])}–${fmt(pgWindow[1])} s`, `${s503.length} in all, ${misplaced.length} outside`, misplaced.length === 0,
    misplaced.slice(0, 10).map((r) => `${r.what} → 503 ${r.reason ?? ''} at ${fmt(r.sent)} s on :${r.port}`));
  const newDuringOutage = s503.filter((r) => r.sent > pgFault.start! + 0.5 && r.sent < pgFault.end!).length;
  check('the PostgreSQL outage met new requests (not only those in flight)', '> 0 requests sent while it was down answered 503', String(newDuringOutage), newDuringOutage > 0);
  const noRetryAfter = s503.filter((r) => !r.retryAfter || !(Number(r.retryAfter) > 0));
  check('every 503 carries Retry-After', '0 without', String(noRetryAfter.length), noRetryAfter.length === 0,
    noRetryAfter.slice(0, 5).map((r) => `${r.what} at ${fmt(r.sent)} s on :${r.port}`));
  const netErrors = all.filter((r) => r.status === 0);
  const explained = (r: Sent) => killedAt !== undefined && r.port === killedPort && r.sent <= killedAt + 0.05 && r.done >= killedAt - 0.05;
  const unexplained = netErrors.filter((r) => !explained(r));
  check('network errors only for requests in flight to the killed instance', '0 others', `${netErrors.length} in all, ${unexplained.length} others`, unexplained.length === 0,
    unexplained.slice(0, 10).map((r) => `${r.what} at ${fmt(r.sent)}–${fmt(r.done)} s on :${r.port}: ${r.error ?? ''}`));
  const limited = load.filter((r) => r.status === 429);
  check('no legitimate request refused with 429', '0', String(limited.length), limited.length === 0,
    limited.slice(0, 5).map((r) => `${r.what} at ${fmt(r.sent)} s: ${r.reason ?? ''}`));

  const windows = faults.filter((f) => ['postgres', 'redis', 'kill'].includes(f.kind)).map(window);
  const quiet = load.filter((r) => r.status > 0 && r.status < 500 && !windows.some((w) => overlaps(r, w))).map((r) => (r.done - r.sent) * 1000);
  const p99 = percentile(quiet, 99);
  const max = quiet.length ? Math.max(...quiet) : 0;
  check('latency outside the fault windows', `p99 ≤ ${P99_LIMIT_MS} ms, max ≤ ${MAX_LIMIT_MS} ms`,
    `${quiet.length} answers: p50 ${percentile(quiet, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
    quiet.length > 0 && p99 <= P99_LIMIT_MS && max <= MAX_LIMIT_MS);
}

function judgeProgress(): void {
  for (const f of faults) {
    if (f.end === undefined) {
      check(`recovery: ${f.name}`, 'the fault ran', 'it did not finish', false);
      continue;
    }
    if (f.kind === 'webhook' || f.kind === 'smtp') {
      const after = f.recoveredAt === undefined ? undefined : f.recoveredAt - f.end;
      check(`recovery: ${f.name}`, `first ${f.kind === 'smtp' ? 'mail' : 'delivery'} ≤ ${RECOVERY_LIMIT_S} s after it ended`,
        after === undefined ? 'none' : `${fmt(after)} s`, after !== undefined && after <= RECOVERY_LIMIT_S);
      continue;
    }
    // A killed instance leaves two that serve: the load must go on from the kill itself, not from the restart.
    const from = f.kind === 'kill' ? f.start! : f.end;
    const lags = [...progress].map(([worker, times]) => {
      const next = times.find((t) => t >= from);
      return { worker, lag: next === undefined ? Infinity : next - from };
    });
    const worst = lags.reduce((a, b) => (b.lag > a.lag ? b : a));
    const late = lags.filter((l) => l.lag > RECOVERY_LIMIT_S);
    check(`progress after: ${f.name}`, `every load worker (${lags.length}) succeeds again ≤ ${RECOVERY_LIMIT_S} s after ${f.kind === 'kill' ? 'the kill' : 'it ended'}`,
      `slowest ${worst.worker}: ${Number.isFinite(worst.lag) ? `${fmt(worst.lag)} s` : 'never'}; service ready ${f.recoveredAt === undefined ? 'never' : `${fmt(f.recoveredAt - f.start!)} s after it began`}`,
      late.length === 0, late.map((l) => `${l.worker}: ${Number.isFinite(l.lag) ? `${fmt(l.lag)} s` : 'no success after it'}`));
  }
}

function judgeRefresh(twoSuccessors: number, compromised: number): void {
  const differing = dropped.filter((d) => !d.identical);
  check('a lost refresh answer, retried with the same Idempotency-Key, is given again identically', `${dropped.length} of ${dropped.length} identical`,
    `${dropped.length - differing.length} of ${dropped.length}`, differing.length === 0 && dropped.length > 0,
    differing.slice(0, 5).map((d) => {
      const fields = Object.keys({ ...d.original, ...d.retry }).filter((k) => !isDeepStrictEqual(d.original[k], d.retry?.[k]));
      return `chain ${d.chain} at ${fmt(d.at)} s: retry ${d.retryStatus ?? 'unanswered'} ${JSON.stringify((d.retry?.details as object | undefined) ?? {})}; differing fields: ${fields.join(', ')}`;
    }));
  check('no chain ended (every refresh answered 200)', '0', String(chainEnds.length), chainEnds.length === 0,
    chainEnds.slice(0, 10).map((e) => `chain ${e.chain} at ${fmt(e.at)} s: ${e.status} ${e.reason}`));
  check('no refresh token honoured twice (two successors in the database)', '0', String(twoSuccessors), twoSuccessors === 0);
  check('no session family revoked as compromised', '0 SessionFamilyCompromised', String(compromised), compromised === 0);
}

function judgeRateLimits(): void {
  const redisFault = faults.find((f) => f.kind === 'redis')!;
  const abuse = requests.filter((r) => r.client === 'abuser' && r.status > 0);
  // A request belongs to a phase when it was sent and answered inside it (one sent just before Redis
  // went away may be decided on the fallback).
  const phase = (a: number, b: number) => {
    const inPhase = abuse.filter((r) => r.sent >= a && r.done < b);
    return { sent: inPhase.length, allowed: inPhase.filter((r) => r.status !== 429).length, refused: inPhase.filter((r) => r.status === 429).length };
  };
  // Redis away: from the stop to its start (every instance decides on its own counters); back: from
  // the moment every instance's /ready says Redis is ok again (the restarted Redis counts from zero).
  // Between the two, instances reconnect one by one, so only the sum is bounded there.
  const down = phase(redisFault.start!, redisFault.end!);
  const before = phase(-Infinity, redisFault.start!);
  const after = phase(redisFault.recoveredAt ?? Infinity, Infinity);
  const sinceOutage = { allowed: abuse.filter((r) => r.sent >= redisFault.start! && r.status !== 429).length, sent: abuse.filter((r) => r.sent >= redisFault.start!).length };
  check('over-budget client, Redis up (shared budget)', `≤ ${ACCEPT_BUDGET} allowed, some 429`, `${before.allowed} allowed, ${before.refused} refused of ${before.sent}`,
    before.allowed <= ACCEPT_BUDGET && before.refused > 0);
  check('over-budget client, Redis down (in-process fallback, per instance)', `≤ ${3 * ACCEPT_BUDGET} allowed (3 × ${ACCEPT_BUDGET}), some 429`,
    `${down.allowed} allowed, ${down.refused} refused of ${down.sent}`, down.allowed <= 3 * ACCEPT_BUDGET && down.refused > 0);
  check('over-budget client, Redis back (its counters lost with it, shared again)', `≤ ${ACCEPT_BUDGET} allowed, some 429`, `${after.allowed} allowed, ${after.refused} refused of ${after.sent}`,
    after.allowed <= ACCEPT_BUDGET && after.refused > 0);
  check('over-budget client, from the Redis outage on', `≤ ${4 * ACCEPT_BUDGET} allowed (3 × ${ACCEPT_BUDGET} in-process, ${ACCEPT_BUDGET} in the new Redis)`,
    `${sinceOutage.allowed} allowed of ${sinceOutage.sent}`, sinceOutage.allowed <= 4 * ACCEPT_BUDGET);
  const counts = [...fallbackAfterRedis.entries()];
  check('every instance decided on in-process counters while Redis was down', 'idp_rate_limit_fallback_decisions_total > 0 on each instance up then',
    counts.map(([i, n]) => `instance ${i}: ${n ?? 'unreadable'}`).join(', '), counts.length > 0 && counts.every(([, n]) => (n ?? 0) > 0));
}

/** Seconds (of the run) at which the instances other than the killed one logged `message` for job `jobId`. */
function survivorLogTimes(jobId: string, message: string): number[] {
  const times: number[] = [];
  for (const file of allLogs().filter((f) => f !== killedLogFile && existsSync(f))) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes(jobId) || !line.includes(`"msg":"${message}"`)) continue;
      const time = (JSON.parse(line) as { time?: number }).time;
      if (time !== undefined) times.push((time - t0) / 1000);
    }
  }
  return times;
}

/**
 * Why a second copy of the same mail (or webhook delivery) is allowed, or undefined when nothing
 * explains it. A kill: the killed instance handed the first copy over (it may reach the receiver a
 * moment after the kill, from the socket's buffer) and died before recording the job done; no
 * surviving instance logged sending that copy; another instance sent it again after the 30 s lease
 * (at-least-once). The SMTP outage: the sink took the first copy just before it closed, and the reply
 * was lost with the connection.
 */
function duplicateExplanation(jobId: string, first: number, second: number, kind: 'mail' | 'webhook'): string | undefined {
  if (killedAt !== undefined && first <= killedAt + 1 && second >= killedAt) {
    const senders = kind === 'mail' ? survivorLogTimes(jobId, 'mail sent').filter((t) => t < second - 0.5) : [];
    if (senders.length === 0) return `instance :${killedPort} killed at ${fmt(killedAt)} s while sending the first copy; sent again after the job's 30 s lease (at-least-once)`;
  }
  const smtpFault = faults.find((f) => f.kind === 'smtp')!;
  if (kind === 'mail' && smtpFault.start !== undefined && first <= smtpFault.start && first >= smtpFault.start - 1 && second >= smtpFault.start) {
    return `SMTP server closed at ${fmt(smtpFault.start)} s right after the first copy (its 250 reply lost with the connection)`;
  }
  return undefined;
}

function judgeMail(): void {
  const byJob = new Map<string, Mail[]>();
  for (const m of mails) byJob.set(`${m.to} ${m.messageId}`, [...(byJob.get(`${m.to} ${m.messageId}`) ?? []), m]);
  const sameJobTwice = [...byJob.values()].filter((copies) => copies.length > 1);
  const jobIdOf = (messageId: string) => /^<([^@]+)@/.exec(messageId)?.[1] ?? messageId;
  const explain = (c: Mail[]) => duplicateExplanation(jobIdOf(c[0]!.messageId), c[0]!.t, c[1]!.t, 'mail');
  const unexplained = sameJobTwice.filter((c) => explain(c) === undefined);
  check('no mail sent twice by one job, except across a kill or the SMTP outage', '0 unexplained', `${sameJobTwice.length} sent twice, ${unexplained.length} unexplained`,
    unexplained.length === 0,
    sameJobTwice.flatMap((c) => [
      `${unexplained.includes(c) ? 'UNEXPLAINED' : 'explained'}: job ${jobIdOf(c[0]!.messageId)} to ${c[0]!.to} "${c[0]!.subject}" at ${c.map((m) => `${fmt(m.t)} s`).join(', ')}${unexplained.includes(c) ? '' : `: ${explain(c)}`}`,
      ...logLines(jobIdOf(c[0]!.messageId)).map((l) => `    ${l}`),
    ]));
  const jobsTo = new Map<string, Set<string>>();
  for (const m of mails) jobsTo.set(m.to, (jobsTo.get(m.to) ?? new Set()).add(m.messageId));
  let sure = 0;
  let got = 0;
  const missing: string[] = [];
  const extra: string[] = [];
  let explainedExtra = 0;
  for (const [to, e] of expectedMails) {
    const jobs = jobsTo.get(to) ?? new Set<string>();
    sure += e.sure;
    got += Math.min(jobs.size, e.sure);
    if (jobs.size < e.sure) missing.push(`${to}: ${jobs.size} of ${e.sure}; requests: ${e.requests.join('; ')}`);
    // A reset request is a job (account-mail.request) that commits its completion with the mail it
    // queues (JobQueue.completeWithin): a kill can no longer make one request queue two mails.
    if (jobs.size > e.sure + e.maybe) {
      extra.push(`${to}: ${jobs.size} jobs for ${e.sure} request(s) answered 200 and ${e.maybe} answer(s) lost; requests: ${e.requests.join('; ')}`);
      for (const id of jobs) extra.push(...logLines(jobIdOf(id), 2).map((l) => `    ${l}`));
    } else if (jobs.size > e.sure) explainedExtra += jobs.size - e.sure;
  }
  check('every mail a request was answered 200 for was sent', `${sure}`, `${got} (missing ${sure - got})`, missing.length === 0 && sure > 0, missing.slice(0, 10));
  check('no mail from a second job for one request', '0 beyond the requests whose answer was lost (503, network error)',
    `${extra.filter((l) => !l.startsWith(' ')).length} recipients over; extra mails explained: ${explainedExtra} by lost answers`,
    extra.length === 0, extra.slice(0, 20));
  const unexpected = [...jobsTo.keys()].filter((to) => !expectedMails.has(to) && to !== 'admin@soak.test');
  check('no mail to an address no request named', '0', String(unexpected.length), unexpected.length === 0, unexpected.slice(0, 5));
}

function judgeWebhooks(eventIds: string[], attempting: number): void {
  const receivedEvents = new Set([...deliveries.values()].map((d) => d.eventId));
  const lost = eventIds.filter((id) => !receivedEvents.has(id));
  check('every audit event of the tenant reached the webhook receiver', `${eventIds.length}`, `${eventIds.length - lost.length} (lost ${lost.length})`, lost.length === 0 && eventIds.length > 0, lost.slice(0, 5));
  check('every delivery verifies (Standard Webhooks signature)', '0 bad', String(badSignatures), badSignatures === 0);
  const twoBodies = [...deliveries].filter(([, d]) => d.bodies.size > 1);
  check('no webhook-id with two bodies', '0', String(twoBodies.length), twoBodies.length === 0, twoBodies.slice(0, 5).map(([id]) => id));
  const twice = [...deliveries].filter(([, d]) => d.times.length > 1);
  const unexplained = twice.filter(([id, d]) => duplicateExplanation(id, d.times[0]!, d.times[1]!, 'webhook') === undefined);
  check('no webhook delivered twice, except across a kill', '0 unexplained', `${twice.length} twice, ${unexplained.length} unexplained`, unexplained.length === 0,
    twice.flatMap(([id, d]) => [`${unexplained.some(([u]) => u === id) ? 'UNEXPLAINED' : 'explained'}: ${id} at ${d.times.map((t) => `${fmt(t)} s`).join(', ')}`, ...logLines(id.replace(/^msg_/, ''), 3).map((l) => `    ${l}`)]));
  check('delivery-log rows left attempting', `≤ ${WORKER_CONCURRENCY} (what the killed worker held)`, String(attempting), attempting <= WORKER_CONCURRENCY);
}

// ---------------------------------------------------------------- run
async function main(): Promise<number> {
  if (process.env.SOAK_SKIP_BUILD !== 'true') execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' });
  if (!existsSync(path.join(root, 'dist/src/main.js'))) throw new Error('dist/src/main.js is missing: run npm run build');
  await stopStaleRedis();
  const databaseUrl = await preparePostgres();
  await startRedis();
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  smtpPort = await freePort();
  await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', () => resolve()));
  baseEnv = {
    NODE_ENV: 'production', DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: '8', REDIS_URL: `redis://127.0.0.1:${REDIS_PORT}`,
    REDIS_KEY_PREFIX: `soak-${randomUUID().slice(0, 8)}`, SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_FROM: 'no-reply@soak.test',
    JWT_SECRET: 'soak-jwt-secret-0123456789-0123456789-0123456789', ENCRYPTION_KEYS: `v1:${Buffer.alloc(32, 9).toString('base64')}`,
    PUBLIC_URL: 'http://127.0.0.1:3000', HOST: '127.0.0.1', TRUST_PROXY: 'loopback', RATE_LIMIT_SCALE: '1', INVITES_PER_TENANT_PER_DAY: '1000000',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'info', METRICS_ENABLED: 'true', METRICS_HOST: '127.0.0.1',
    JOB_POLL_INTERVAL_MS: '200', JOB_RETRY_BASE_SECONDS: '1', JOB_QUEUE: 'soak',
  };
  for (const name of ['NODE_OPTIONS', 'MAX_HEAP_MB', 'WEB_CONCURRENCY']) delete process.env[name];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const metricsPort = await freePort();
    const started = spawnInstance(i, port, metricsPort, 0);
    instances.push({ index: i, port, metricsPort, child: started.child, up: false, logs: [started.log] });
    if (i === 0) await waitHealthy(port); // the first applies the migrations
  }
  await Promise.all(instances.map(async (i) => {
    await waitHealthy(i.port);
    i.up = true;
  }));
  const tenant = await call('setup', 'POST', '/v1/tenants', { tenant: { name: 'Soak' }, admin: { email: 'admin@soak.test', password: PASSWORD } });
  slug = String(tenant.body.tenantSlug);
  adminToken = String(tenant.body.accessToken);
  const hook = await call('setup', 'POST', `/v1/${slug}/webhooks`, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in` }, { authorization: `Bearer ${adminToken}` });
  webhookSecret = String(hook.body.secret);
  const hookCreatedAt = new Date();

  requests.length = 0;
  t0 = Date.now();
  log(`load for ${SECONDS} s on 3 instances (${instances.map((i) => i.port).join(', ')}), PostgreSQL :${PG_PORT}, Redis :${REDIS_PORT}; records in ${OUT}`);
  const load = [...Array.from({ length: CHAINS }, (_, n) => chain(n)), accounts(0), accounts(1), abuser()];
  const faultRuns = faults.map(async (fault) => {
    await sleep(fault.at * 1000);
    fault.start = now();
    log(`fault: ${fault.name}`);
    await fault.run();
    fault.end = now();
    fault.recoveredAt = await Promise.race([fault.recovered(), sleep(60_000).then(() => undefined)]);
    log(fault.recoveredAt === undefined ? `NOT recovered within 60 s: ${fault.name}` : `recovered: ${fault.name}, ${fmt(fault.recoveredAt - fault.start)} s after it began`);
  });
  await sleep(SECONDS * 1000);
  stopping = true;
  await Promise.all(load);
  await Promise.all(faultRuns);

  log('draining the job queue (a job the killed instance held waits for its 30 s lease)');
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const drainUntil = Date.now() + 60_000;
  let left = 0;
  for (;;) {
    const { rows } = await db.query<{ n: string }>(`select count(*) as n from job where failed_at is null`);
    left = Number(rows[0]!.n);
    if (left === 0 || Date.now() > drainUntil) break;
    await sleep(500);
  }
  await sleep(1000);
  const events = await db.query<{ id: string }>('select id from audit_event where tenant_id = (select id from tenant where slug = $1) and created_at >= $2', [slug, hookCreatedAt]);
  const failedJobs = await db.query<{ id: string; kind: string; last_error: string }>('select id, kind, last_error from job where failed_at is not null');
  const attempting = await db.query<{ n: string }>(`select count(*) as n from webhook_delivery where outcome = 'attempting'`);
  const twoSuccessors = await db.query<{ n: string }>('select count(*) as n from (select parent_id from refresh_token where parent_id is not null group by parent_id having count(*) > 1) t');
  const compromised = await db.query<{ n: string }>(`select count(*) as n from audit_event where action = 'SessionFamilyCompromised'`);
  await db.end();

  judgeAnswers();
  judgeProgress();
  judgeRefresh(Number(twoSuccessors.rows[0]!.n), Number(compromised.rows[0]!.n));
  judgeRateLimits();
  judgeMail();
  judgeWebhooks(events.rows.map((r) => r.id), Number(attempting.rows[0]!.n));
  check('job queue drained', '0 jobs left', String(left), left === 0);
  check('no job failed for good', '0', String(failedJobs.rows.length), failedJobs.rows.length === 0, failedJobs.rows.map((j) => `${j.kind} ${j.id}: ${j.last_error}`));

  const byStatus = requests.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.status === 0 ? 'network error' : r.status]: (acc[r.status === 0 ? 'network error' : r.status] ?? 0) + 1 }), {});
  console.log('\n== fault soak ==');
  console.log(`requests: ${requests.length} ${JSON.stringify(byStatus)}; refreshes ${stats.refreshes} (answers lost on purpose and retried: ${dropped.length}), sign-ups ${stats.signups}, invites ${stats.invites}, resets ${stats.resets}; mails ${mails.length}; webhook deliveries ${[...deliveries.values()].reduce((n, d) => n + d.times.length, 0)}`);
  for (const f of faults) {
    console.log(`fault ${f.name}: ${fmt(f.start ?? NaN)}–${fmt(f.end ?? NaN)} s, recovered at ${f.recoveredAt === undefined ? 'never' : `${fmt(f.recoveredAt)} s`}`);
  }
  console.log('');
  for (const c of checks) {
    console.log(`${c.pass ? 'PASS' : 'FAIL'}  ${c.name}\n        expected: ${c.expected}\n        observed: ${c.observed}`);
    for (const d of (c.details ?? []).slice(0, 20)) console.log(`        ${d}`);
  }
  const failed = checks.filter((c) => !c.pass);
  console.log(`\n${failed.length === 0 ? 'PASS' : 'FAIL'}: ${checks.length - failed.length} of ${checks.length} invariants hold. Logs, requests, mails and report.json in ${OUT}`);
  writeFileSync(path.join(OUT, 'report.json'), JSON.stringify({ seconds: SECONDS, faults, stats, checks }, null, 2));
  writeFileSync(path.join(OUT, 'requests.jsonl'), requests.map((r) => JSON.stringify(r)).join('\n'));
  writeFileSync(path.join(OUT, 'mails.jsonl'), mails.map((m) => JSON.stringify(m)).join('\n'));
  return failed.length === 0 ? 0 : 1;
}

/** Stops everything the soak started: the instances, Redis, the receiver, the SMTP sink and its PostgreSQL cluster. */
async function cleanUp(): Promise<void> {
  stopping = true;
  await Promise.all(instances.map((i) => new Promise<void>((resolve) => {
    if (i.child.exitCode !== null || i.child.signalCode !== null) return resolve();
    const timer = setTimeout(() => i.child.kill('SIGKILL'), 12_000);
    i.child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    i.child.kill('SIGTERM');
  })));
  await stopRedis();
  receiver.close();
  smtp.close(() => undefined);
  await pgctl('stop').catch(() => undefined);
}

let exitCode = 2;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`${signal}: stopping the soak`);
    void cleanUp().finally(() => process.exit(130));
  });
}
main()
  .then((code) => {
    exitCode = code;
  })
  .catch((err: unknown) => {
    console.error('the soak could not run:', err);
    exitCode = 2;
  })
  .finally(async () => {
    await cleanUp();
    process.exit(exitCode);
  });
