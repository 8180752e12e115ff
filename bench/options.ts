import { parseArgs } from 'node:util';

/** Every scenario the suite knows, in the order they run. */
export const SCENARIO_NAMES = ['health', 'me-trpc', 'me', 'refresh', 'users-list', 'users-search', 'audit', 'audit-activity', 'login', 'me-during-login', 'login+totp', 'signup', 'oidc-client-credentials', 'oidc-code-exchange', 'oidc-client-credentials-resource', 'oidc-client-credentials-rbac', 'oidc-code-exchange-resource', 'oidc-code-exchange-rbac'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** Products `--compare` can measure side by side with the service (docs/performance.md "Against Better Auth"). */
export const COMPARISONS = ['better-auth'] as const;
export type Comparison = (typeof COMPARISONS)[number];

/** The scenarios of `--compare better-auth`, run after the service's own. */
export const BETTER_AUTH_SCENARIO_NAMES = ['better-auth-get-session', 'better-auth-sign-in'] as const;
export type BetterAuthScenarioName = (typeof BETTER_AUTH_SCENARIO_NAMES)[number];

/** The service's scenarios a comparison is measured against; `--compare` adds them when missing. */
export const COMPARED_SCENARIOS: Record<Comparison, ScenarioName[]> = { 'better-auth': ['me', 'login'] };

/**
 * No Node options: the service sets its own heap limit (`MAX_HEAP_MB`, src/heap-limit.ts; the bench
 * passes its environment on, so `MAX_HEAP_MB=0 npm run bench` runs it without). A
 * `--max-old-space-size` given here wins over that limit and keeps the service on its main thread,
 * with `--max-semi-space-size` as its young generation (docs/performance.md "The heap setting").
 */
export const DEFAULT_SERVICE_NODE_OPTIONS = '';

/** Settings of one `npm run bench`; each comes from a `--flag` or else its `BENCH_*` variable. */
export interface BenchOptions {
  /** PostgreSQL server; the bench creates and drops its own database there. */
  databaseUrl: string;
  redisUrl: string;
  /** Seconds of load per scenario. */
  durationSeconds: number;
  /** Concurrent connections for the non-hashing scenarios (`me`, `refresh`, lists). */
  connections: number;
  /** Concurrent connections for the scenarios that hash a password (`login*`, `signup`). */
  hashConnections: number;
  /** Service processes (`WEB_CONCURRENCY` of the service under test, and of the bare-HTTP ceiling). */
  serviceProcesses: number;
  /** Seconds the argon2 ceiling is measured for. */
  argon2Seconds: number;
  users: number;
  auditEvents: number;
  scenarios: ScenarioName[];
  /** Other products measured side by side, after the service's scenarios (none by default). */
  compare: Comparison[];
  /** Keep the bench database afterwards (for inspection). */
  keepDatabase: boolean;
  /** Node.js options of the service processes only (their `NODE_OPTIONS`). */
  serviceNodeOptions: string;
  /** Also start the service on the embedded database once, to measure its idle RSS. */
  embeddedIdle: boolean;
  /** Start the service with `--cpu-prof` and leave the profiles in this directory. */
  cpuProfileDir: string | undefined;
  resultsFile: string;
}

const FLAGS = {
  duration: { type: 'string', env: 'BENCH_DURATION', help: 'seconds per scenario (10)' },
  connections: { type: 'string', env: 'BENCH_CONNECTIONS', help: 'connections for reads and refresh (32)' },
  'hash-connections': { type: 'string', env: 'BENCH_HASH_CONNECTIONS', help: 'connections for login/signup (16)' },
  processes: { type: 'string', env: 'BENCH_PROCESSES', help: 'service processes, WEB_CONCURRENCY (1)' },
  'argon2-seconds': { type: 'string', env: 'BENCH_ARGON2_SECONDS', help: 'seconds of the argon2 ceiling (5)' },
  users: { type: 'string', env: 'BENCH_USERS', help: 'users seeded in the users-list tenant (10000)' },
  'audit-events': { type: 'string', env: 'BENCH_AUDIT_EVENTS', help: 'events seeded in the audit tenant (1000000)' },
  scenarios: { type: 'string', env: 'BENCH_SCENARIOS', help: `comma-separated subset of ${SCENARIO_NAMES.join(',')}` },
  compare: { type: 'string', env: 'BENCH_COMPARE', help: `also measure ${COMPARISONS.join(',')} side by side (adds me,login; installs it into bench/better-auth on first use)` },
  'keep-db': { type: 'boolean', env: 'BENCH_KEEP_DB', help: 'keep the bench database' },
  'service-node-options': { type: 'string', env: 'BENCH_SERVICE_NODE_OPTIONS', help: `NODE_OPTIONS of the service only (${DEFAULT_SERVICE_NODE_OPTIONS})` },
  'no-embedded-idle': { type: 'boolean', env: 'BENCH_NO_EMBEDDED_IDLE', help: 'skip the idle RSS of the service on the embedded database' },
  'cpu-prof': { type: 'string', env: 'BENCH_CPU_PROF', help: 'directory for service --cpu-prof profiles' },
  out: { type: 'string', env: 'BENCH_OUT', help: 'results file (bench/results/latest.json)' },
  help: { type: 'boolean', env: '', help: 'this text' },
} as const;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw Object.assign(new Error(`--${name} must be a positive integer, got "${value}"`), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
  return n;
}

/** Parses `process.argv` and the `BENCH_*` variables; prints usage and exits on `--help`. */
export function loadBenchOptions(argv = process.argv.slice(2), env = process.env): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries(Object.entries(FLAGS).map(([k, v]) => [k, { type: v.type }])) as Record<string, { type: 'string' | 'boolean' }>,
    allowPositionals: false,
  });
  const get = (flag: keyof typeof FLAGS): string | undefined => {
    const v = values[flag];
    if (v !== undefined) return String(v);
    const name = FLAGS[flag].env;
    return name ? env[name] : undefined;
  };
  if (values.help) {
    const lines = Object.entries(FLAGS).map(([k, v]) => `  --${k.padEnd(16)} ${v.env.padEnd(22)} ${v.help}`);
    console.log(`npm run bench -- [flags]\n${lines.join('\n')}\n  DATABASE_URL (postgres://postgres@127.0.0.1:5432/postgres), REDIS_URL (redis://127.0.0.1:6379)`);
    process.exit(0);
  }
  const scenarioList = get('scenarios');
  const scenarios = scenarioList
    ? scenarioList.split(',').map((s) => s.trim()).filter(Boolean)
    : [...SCENARIO_NAMES];
  for (const s of scenarios) {
    if (!(SCENARIO_NAMES as readonly string[]).includes(s)) {
      throw Object.assign(new Error(`unknown scenario "${s}" (known: ${SCENARIO_NAMES.join(', ')})`), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
    }
  }
  const compare = (get('compare') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const c of compare) {
    if (!(COMPARISONS as readonly string[]).includes(c)) {
      throw Object.assign(new Error(`unknown comparison "${c}" (known: ${COMPARISONS.join(', ')})`), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
    }
  }
  // A comparison is a ratio to the service's own scenarios of the same run: run them too, in suite order.
  const wanted = new Set([...scenarios, ...(compare as Comparison[]).flatMap((c) => COMPARED_SCENARIOS[c])]);
  const truthy = (v: string | undefined) => v === 'true' || v === '1' || v === 'yes';
  return {
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    durationSeconds: positiveInt('duration', get('duration'), 10),
    connections: positiveInt('connections', get('connections'), 32),
    hashConnections: positiveInt('hash-connections', get('hash-connections'), 16),
    serviceProcesses: positiveInt('processes', get('processes'), 1),
    argon2Seconds: positiveInt('argon2-seconds', get('argon2-seconds'), 5),
    users: positiveInt('users', get('users'), 10_000),
    auditEvents: positiveInt('audit-events', get('audit-events'), 1_000_000),
    scenarios: SCENARIO_NAMES.filter((s) => wanted.has(s)),
    compare: [...new Set(compare as Comparison[])],
    keepDatabase: truthy(get('keep-db')),
    serviceNodeOptions: get('service-node-options') ?? DEFAULT_SERVICE_NODE_OPTIONS,
    embeddedIdle: !truthy(get('no-embedded-idle')),
    cpuProfileDir: get('cpu-prof') || undefined,
    resultsFile: get('out') || 'bench/results/latest.json',
  };
}
