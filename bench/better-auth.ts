/**
 * `npm run bench -- --compare better-auth`: Better Auth, installed in bench/better-auth (its own
 * package.json and lockfile, never a dependency of the service), started as a process of its own on a
 * database of its own, and its scenarios, loaded like the service's (docs/performance.md "Against
 * Better Auth").
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RawRequest } from 'autocannon';
import { mapConcurrent } from './client.js';
import type { BenchOptions, BetterAuthScenarioName, ScenarioName } from './options.js';
import type { Scenario } from './scenarios.js';
import { BENCH_PASSWORD } from './scenarios.js';
import { freePort, watchUntilReady, type ServiceProcess } from './service.js';

/** The folder of the comparison: package.json, package-lock.json, server.mjs and, once installed, node_modules. */
export const BETTER_AUTH_DIR = path.join('bench', 'better-auth');

/** The service's scenario each Better Auth scenario is compared with. */
export const BETTER_AUTH_COUNTERPARTS: Record<BetterAuthScenarioName, ScenarioName> = {
  'better-auth-get-session': 'me',
  'better-auth-sign-in': 'login',
};

/**
 * Headers of a sign-up or sign-in POST, as a browser page of the application sends them: Better Auth
 * refuses a POST that looks like a browser's (Node's fetch sends `sec-fetch-mode`) without an Origin.
 */
function postHeaders(baseUrl: string): Record<string, string> {
  return { 'content-type': 'application/json', origin: baseUrl };
}
const SESSION_COOKIE = 'better-auth.session_token';

function readJson(file: string): { version?: string; dependencies?: Record<string, string> } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { version?: string; dependencies?: Record<string, string> };
  } catch {
    return undefined;
  }
}

/** Runs npm (the one running this bench under `npm run`, else the one on PATH) and fails on a non-zero exit. */
function runNpm(args: string[]): Promise<void> {
  const npmCli = process.env.npm_execpath;
  const [command, commandArgs] = npmCli && /npm-cli\.[cm]?js$/.test(npmCli) ? [process.execPath, [npmCli, ...args]] : ['npm', args];
  return new Promise((resolve, reject) => {
    // npm's own output goes to stderr: stdout is the bench's report.
    const child = spawn(command, commandArgs, { stdio: ['ignore', process.stderr, 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm ${args.join(' ')} exited with ${code}`))));
  });
}

/**
 * Makes sure bench/better-auth/node_modules holds the versions its package.json pins, installing them
 * from its lockfile (`npm ci --prefix bench/better-auth`, from the npm registry) when not; the
 * project's own node_modules is never touched.
 * @returns the Better Auth version installed. @throws when npm fails (no registry, for instance).
 */
export async function ensureBetterAuthInstalled(log: (line: string) => void): Promise<string> {
  const pinned = readJson(path.join(BETTER_AUTH_DIR, 'package.json'))?.dependencies ?? {};
  const installed = (name: string) => readJson(path.join(BETTER_AUTH_DIR, 'node_modules', name, 'package.json'))?.version;
  const stale = Object.entries(pinned).filter(([name, version]) => installed(name) !== version);
  if (stale.length > 0) {
    log(`installing ${stale.map(([n, v]) => `${n}@${v}`).join(', ')} into ${BETTER_AUTH_DIR}/node_modules (npm ci, first use)`);
    await runNpm(['ci', '--prefix', BETTER_AUTH_DIR, '--no-audit', '--no-fund']);
  }
  const version = installed('better-auth');
  if (!version || !existsSync(path.join(BETTER_AUTH_DIR, 'server.mjs'))) throw new Error(`Better Auth is not installed in ${BETTER_AUTH_DIR}`);
  return version;
}

/**
 * Starts bench/better-auth/server.mjs on a free port against `databaseUrl` (a database of its own;
 * the server creates its tables), with `NODE_ENV=production`, a fresh secret, Node's defaults (no
 * heap cap: Better Auth's own sizing) and telemetry off, and waits for `GET /api/auth/ok`.
 */
export async function startBetterAuth(databaseUrl: string): Promise<ServiceProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.REDIS_URL;
  const child = spawn(process.execPath, [path.join(BETTER_AUTH_DIR, 'server.mjs')], {
    env: {
      ...env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      BETTER_AUTH_SECRET: randomBytes(32).toString('base64'),
      BETTER_AUTH_TELEMETRY: '0',
      NODE_OPTIONS: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchUntilReady(child, port, '/api/auth/ok', 'Better Auth');
}

/** The `name=value` of Better Auth's session cookie in an answer's Set-Cookie headers. */
function sessionCookie(res: Response): string {
  const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (!cookie) throw new Error(`${res.url} answered ${res.status} without a ${SESSION_COOKIE} cookie`);
  return cookie;
}

/** Whether a `get-session` answer carries a session (Better Auth answers 200 `null` without one). */
function hasSession(body: string): boolean {
  try {
    return (JSON.parse(body) as { session?: { id?: string } } | null)?.session?.id !== undefined;
  } catch {
    return false;
  }
}

/**
 * Better Auth's accounts for the scenarios: `options.connections + 16` users signed up through
 * `POST /api/auth/sign-up/email` (8 at a time; each sign-up also signs in), their session cookies
 * checked with `get-session`. The same count and password as the service's signed-in users.
 */
async function signUpUsers(baseUrl: string, options: BenchOptions, log: (line: string) => void): Promise<{ email: string; cookie: string }[]> {
  const count = options.connections + 16;
  log(`better-auth: signing up ${count} users`);
  return mapConcurrent(Array.from({ length: count }, (_, i) => i + 1), 8, async (n) => {
    const email = `user${n}@bench.test`;
    const res = await fetch(`${baseUrl}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: postHeaders(baseUrl),
      body: JSON.stringify({ email, password: BENCH_PASSWORD, name: `User ${n}` }),
    });
    if (res.status !== 200) throw new Error(`sign-up of ${email} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    const cookie = sessionCookie(res);
    const check = await fetch(`${baseUrl}/api/auth/get-session`, { headers: { cookie } });
    if (check.status !== 200 || !hasSession(await check.text())) throw new Error(`get-session of ${email}'s new session answered ${check.status} without a session`);
    return { email, cookie };
  });
}

/**
 * The Better Auth scenarios, the counterparts of the service's `me` and `login` (same connections,
 * same password, the same number of distinct signed-in users taken round-robin).
 */
export function buildBetterAuthScenarios(baseUrl: string, options: BenchOptions, log: (line: string) => void): Scenario<BetterAuthScenarioName>[] {
  let users: Promise<{ email: string; cookie: string }[]> | undefined;
  const accounts = () => (users ??= signUpUsers(baseUrl, options, log));
  return [
    {
      name: 'better-auth-get-session',
      ceiling: 'http',
      description: 'Better Auth GET /api/auth/get-session with a signed session cookie (session and user read from PostgreSQL): the counterpart of `me`',
      async prepare() {
        const cookies = (await accounts()).map((a) => a.cookie);
        let next = 0;
        let withoutSession = 0;
        return {
          kind: 'ready',
          connections: options.connections,
          requests: [
            {
              method: 'GET',
              path: '/api/auth/get-session',
              setupRequest(req: RawRequest) {
                return { ...req, headers: { cookie: cookies[next++ % cookies.length]! } };
              },
              onResponse(status: number, body: string) {
                if (status === 200 && !hasSession(body)) withoutSession++;
              },
            },
          ],
          verify: () => (withoutSession > 0 ? `${withoutSession} answers 200 without a session` : undefined),
        };
      },
    },
    {
      name: 'better-auth-sign-in',
      ceiling: 'none',
      description: 'Better Auth POST /api/auth/sign-in/email of a random one of its users (one scrypt verification, N=16384 r=16, a new session): the counterpart of `login`',
      async prepare() {
        const emails = (await accounts()).map((a) => a.email);
        return {
          kind: 'ready',
          connections: options.hashConnections,
          requests: [
            {
              method: 'POST',
              path: '/api/auth/sign-in/email',
              setupRequest(req: RawRequest) {
                const email = emails[Math.floor(Math.random() * emails.length)]!;
                return { ...req, headers: postHeaders(baseUrl), body: JSON.stringify({ email, password: BENCH_PASSWORD }) };
              },
            },
          ],
        };
      },
    },
  ];
}
