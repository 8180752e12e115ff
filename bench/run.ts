/**
 * `npm run bench`: the performance suite of docs/performance.md. Creates its own database on the
 * server of DATABASE_URL, starts the compiled service as a separate process tree (cluster workers,
 * Redis), seeds data with SQL, measures the ceilings (argon2id hashes/s, bare node:http answers/s),
 * loads each scenario with autocannon, prints a table and writes bench/results/latest.json. With
 * `--compare better-auth` it then does the same for Better Auth (bench/better-auth.ts), side by side.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import path from 'node:path';
import argon2 from 'argon2';
import { ARGON2_OPTIONS } from '../src/security/passwords.js';
import { BETTER_AUTH_COUNTERPARTS, buildBetterAuthScenarios, ensureBetterAuthInstalled, startBetterAuth } from './better-auth.js';
import { JsonClient } from './client.js';
import { createBenchDatabase, Seeder, type BenchDatabase } from './database.js';
import { runLoad, type LoadResult } from './load.js';
import { loadBenchOptions, type BenchOptions, type BetterAuthScenarioName, type ScenarioName } from './options.js';
import { BENCH_PASSWORD, BenchFixture, buildScenarios, type CeilingKind, type Scenario } from './scenarios.js';
import { freePort, idleRss, ProcessMonitor, startService, stopChild, waitForOk, type ServiceProcess } from './service.js';

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** One row of the report. */
interface ScenarioReport {
  scenario: ScenarioName | BetterAuthScenarioName;
  description: string;
  status: 'measured' | 'skipped' | 'failed';
  reason?: string;
  connections?: number;
  result?: LoadResult;
  /** Peak RSS of the whole service (cluster primary + workers; Better Auth's process for its rows), in bytes. */
  peakRssBytes?: number;
  /** Peak RSS of its largest single process, in bytes. */
  peakProcessRssBytes?: number;
  /** Service CPU milliseconds per successful request (user + system, all processes). */
  cpuMsPerRequest?: number;
  /** The load run beside the measured one, when the scenario has one. */
  background?: LoadResult;
  ceiling: CeilingKind;
  ceilingPerSecond?: number;
  ratio?: number;
}

interface Ceilings {
  argon2: { hashesPerSecond: number; concurrency: number; params: typeof ARGON2_OPTIONS };
  http: LoadResult & { processes: number };
}

function machine() {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux
  }
  let load: string | undefined;
  try {
    load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    // not Linux
  }
  return { cores: availableParallelism(), cpuModel: model, memoryBytes: totalmem(), node: process.version, loadAverage: load };
}

/** Runs a TypeScript child script (through tsx) and returns its stdout. */
function runChild(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited with ${code}`))));
  });
}

async function measureArgon2(options: BenchOptions): Promise<Ceilings['argon2']> {
  const cores = availableParallelism();
  const out = await runChild('bench/argon2-ceiling.ts', [String(options.argon2Seconds), String(cores)], {
    UV_THREADPOOL_SIZE: String(Math.max(4, cores)),
  });
  const parsed = JSON.parse(out.trim()) as { hashesPerSecond: number; concurrency: number };
  return { hashesPerSecond: parsed.hashesPerSecond, concurrency: parsed.concurrency, params: ARGON2_OPTIONS };
}

async function measureBareHttp(options: BenchOptions): Promise<Ceilings['http']> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/http-ceiling.ts'], {
    env: { ...process.env, PORT: String(port), PROCESSES: String(options.serviceProcesses) },
    stdio: 'inherit',
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(url, 30_000, child);
    const result = await runLoad({ url, connections: options.connections, durationSeconds: options.durationSeconds, requests: [{ method: 'GET', path: '/' }] });
    return { ...result, processes: options.serviceProcesses };
  } finally {
    await stopChild(child);
  }
}

/** One aim of docs/performance.md "Aims", checked against the whole run. */
interface AimCheck {
  aim: string;
  /** What was measured, in words; undefined when a scenario it needs was not measured. */
  observed?: string;
  met?: boolean;
}

/** An aim on the ratio of two measured values of the same run (`numerator / denominator <= max` or `>= min`). */
function ratioAim(aim: string, numerator: number | undefined, denominator: number | undefined, bound: { max: number } | { min: number }): AimCheck {
  if (numerator === undefined || denominator === undefined || denominator <= 0) return { aim };
  const ratio = numerator / denominator;
  return { aim, observed: `${ratio.toFixed(2)}x (${numerator.toFixed(3)} / ${denominator.toFixed(3)})`, met: 'max' in bound ? ratio <= bound.max : ratio >= bound.min };
}

/** CPU per request of a measured scenario among `rows`, or undefined. */
function measuredCpu(rows: ScenarioReport[], name: ScenarioName | BetterAuthScenarioName): number | undefined {
  return rows.find((r) => r.scenario === name && r.status === 'measured')?.cpuMsPerRequest;
}

/**
 * The aims of docs/performance.md "Aims": ratios inside one run, so they hold on any machine (the CPU
 * of a route against the same run's `GET /health`, sign-in against the same run's argon2id ceiling,
 * Better Auth's session read against `me` when `--compare better-auth` ran), and the peak resident
 * size with the defaults. An aim whose scenarios did not run is not checked.
 * @param comparisonRows the Better Auth rows (empty without `--compare better-auth`).
 */
function checkAims(rows: ScenarioReport[], peakRssBytes: number, comparisonRows: ScenarioReport[]): AimCheck[] {
  const cpu = (name: ScenarioName) => measuredCpu(rows, name);
  const login = rows.find((r) => r.scenario === 'login' && r.status === 'measured');
  const measuredAny = rows.some((r) => r.status === 'measured');
  return [
    ratioAim('`me` service CPU per request <= 3x `/health`', cpu('me'), cpu('health'), { max: 3 }),
    ratioAim('`refresh` service CPU per request <= 5x `/health`', cpu('refresh'), cpu('health'), { max: 5 }),
    ratioAim('`refresh` service CPU per request <= 1.3x `me`', cpu('refresh'), cpu('me'), { max: 1.3 }),
    login?.ratio === undefined
      ? { aim: 'sign-in (`login`) >= 90% of the argon2id ceiling' }
      : { aim: 'sign-in (`login`) >= 90% of the argon2id ceiling', observed: `${(login.ratio * 100).toFixed(1)}%`, met: login.ratio >= 0.9 },
    measuredAny
      ? { aim: 'peak service RSS < 250 MB with the defaults', observed: `${mb(peakRssBytes)} MB`, met: peakRssBytes < 250 * 1024 * 1024 }
      : { aim: 'peak service RSS < 250 MB with the defaults' },
    ratioAim('read CPU per request, Better Auth\'s `get-session` / our `me` >= 3x (`--compare better-auth`)', measuredCpu(comparisonRows, 'better-auth-get-session'), cpu('me'), { min: 3 }),
  ];
}

/** Prints each aim with what was measured; @returns whether any checked aim was missed. */
function printAims(checks: AimCheck[]): boolean {
  console.log('\naims (docs/performance.md "Aims"):');
  for (const c of checks) {
    const verdict = c.met === undefined ? 'not checked (its scenarios did not run)' : c.met ? 'met' : 'MISSED';
    console.log(`  ${verdict.padEnd(7)} ${c.aim}${c.observed ? `: ${c.observed}` : ''}`);
  }
  return checks.some((c) => c.met === false);
}

const mb = (bytes: number | undefined) => (bytes === undefined ? '' : (bytes / 1024 / 1024).toFixed(0));

function printTable(rows: ScenarioReport[], ceilings: Ceilings): void {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'RSS MB all/1 proc', 'CPU ms/req', 'CPU x /health', 'ceiling /s', 'ratio'];
  const table: string[][] = [
    ['ceiling: argon2id', ceilings.argon2.hashesPerSecond.toFixed(1), '', '', '', '', '', '', '', '',
      `hashes/s, m=${ARGON2_OPTIONS.memoryCost} KiB t=${ARGON2_OPTIONS.timeCost} p=${ARGON2_OPTIONS.parallelism}, ${ceilings.argon2.concurrency} in flight`],
    ['ceiling: bare http', ceilings.http.requestsPerSecond.toFixed(0), ceilings.http.p50Ms.toFixed(1), ceilings.http.p99Ms.toFixed(1),
      String(ceilings.http.errors), '', '', '', '', '', `${ceilings.http.processes} node:http process(es)`],
  ];
  const notes: string[] = [];
  const healthCpu = rows.find((r) => r.scenario === 'health')?.cpuMsPerRequest;
  for (const r of rows) {
    if (r.status !== 'measured' || !r.result) {
      notes.push(`${r.scenario}: ${r.reason ?? r.status}`);
      continue;
    }
    table.push([
      r.scenario,
      r.result.requestsPerSecond.toFixed(0),
      r.result.p50Ms.toFixed(1),
      r.result.p99Ms.toFixed(1),
      String(r.result.errors),
      `${mb(r.peakRssBytes)}/${mb(r.peakProcessRssBytes)}`,
      r.cpuMsPerRequest === undefined ? '' : r.cpuMsPerRequest.toFixed(2),
      // another product's CPU is compared with its counterpart (printComparison), not with our floor
      r.cpuMsPerRequest === undefined || !healthCpu || r.scenario in BETTER_AUTH_COUNTERPARTS ? '' : `${(r.cpuMsPerRequest / healthCpu).toFixed(2)}x`,
      r.ceilingPerSecond === undefined ? '' : `${r.ceiling} ${r.ceilingPerSecond.toFixed(0)}`,
      r.ratio === undefined ? '' : `${(r.ratio * 100).toFixed(1)}%`,
    ]);
  }
  const all = [header, ...table];
  const widths = header.map((_, i) => Math.max(...all.map((l) => l[i]!.length)));
  for (const l of all) console.log(l.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd());
  for (const note of notes) console.log(note);
}

/** Where a scenario's load goes: the process tree that answers it and the monitor of that tree. */
interface LoadTarget {
  url: string;
  monitor: ProcessMonitor;
}

/**
 * Prepares and loads one scenario against `target`: its requests/s and latency, the peak RSS and CPU
 * time of the target's processes during the load (CPU per successful request), and its ratio to its
 * ceiling. A scenario that cannot run is `skipped`, one that throws or fails its check `failed`.
 */
async function measureScenario(
  scenario: Scenario<ScenarioName | BetterAuthScenarioName>, target: LoadTarget, options: BenchOptions, ceilings: Ceilings,
): Promise<ScenarioReport> {
  const row: ScenarioReport = { scenario: scenario.name, description: scenario.description, status: 'skipped', ceiling: scenario.ceiling };
  try {
    log(`${scenario.name}: preparing`);
    const prepared = await scenario.prepare();
    if (prepared.kind === 'skipped') {
      row.reason = prepared.reason;
      log(`${scenario.name}: ${prepared.reason}`);
      return row;
    }
    log(`${scenario.name}: ${prepared.amount ? `${prepared.amount} requests` : `${options.durationSeconds} s`} with ${prepared.connections} connections`);
    target.monitor.takeWindow();
    const background = prepared.background
      ? runLoad({ url: target.url, durationSeconds: options.durationSeconds, ...prepared.background })
      : undefined;
    const result = await runLoad({ url: target.url, connections: prepared.connections, durationSeconds: options.durationSeconds, requests: prepared.requests, amount: prepared.amount });
    const beside = await background;
    if (beside) {
      row.background = beside;
      log(`${scenario.name}: beside it ${beside.requestsPerSecond.toFixed(1)} req/s, p99 ${beside.p99Ms} ms, ${beside.errors} errors`);
    }
    const used = target.monitor.takeWindow();
    const wrong = prepared.verify?.();
    if (wrong) throw new Error(wrong);
    row.status = 'measured';
    row.connections = prepared.connections;
    row.result = result;
    row.peakRssBytes = used.peakRssBytes;
    row.peakProcessRssBytes = used.peakProcessRssBytes;
    // With a background load the service's CPU time is not this scenario's alone.
    row.cpuMsPerRequest = result.ok > 0 && !beside ? (used.cpuSeconds * 1000) / result.ok : undefined;
    if (scenario.ceiling !== 'none') {
      row.ceilingPerSecond = scenario.ceiling === 'argon2' ? ceilings.argon2.hashesPerSecond : ceilings.http.requestsPerSecond;
      row.ratio = result.requestsPerSecond / row.ceilingPerSecond;
    }
    log(
      `${scenario.name}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ` +
        `${row.cpuMsPerRequest?.toFixed(2)} CPU ms/req, ${result.errors} errors ${JSON.stringify(result.statusCounts)}`,
    );
  } catch (err) {
    row.status = 'failed';
    row.reason = `failed: ${(err as Error).message.slice(0, 300)}`;
    log(`${scenario.name}: ${row.reason}`);
  }
  return row;
}

/** What `--compare better-auth` measured, for the report. */
interface BetterAuthComparison {
  /** The Better Auth version installed in bench/better-auth. */
  version?: string;
  /** Why it could not run (installation or start-up failed); its scenarios are then missing. */
  failure?: string;
  idleRssBytes?: number;
  scenarios: ScenarioReport[];
  /** Its CPU per request over ours, per pair (`get-session` / `me`, `sign-in/email` / `login`). */
  ratios: { scenario: BetterAuthScenarioName; ours: ScenarioName; ratio?: number }[];
  /** Its last log lines (errors and warnings), when it logged any. */
  logLines: string[];
}

/** The processes and database of a comparison, so that Ctrl-C stops them too. */
interface ComparisonRun {
  server?: ServiceProcess;
  database?: BenchDatabase;
  monitor?: ProcessMonitor;
}

/** Stops what `run` holds and drops its database (unless `--keep-db`); safe to call twice. */
async function stopComparisonRun(run: ComparisonRun, keepDatabase: boolean): Promise<void> {
  run.monitor?.stop();
  run.monitor = undefined;
  await run.server?.stop();
  run.server = undefined;
  const database = run.database;
  run.database = undefined;
  if (database && !keepDatabase) await database.drop().catch((err: unknown) => log(`could not drop ${database.name}: ${String(err)}`));
  else if (database) log(`kept database ${database.name}`);
}

/**
 * `--compare better-auth`: installs Better Auth into bench/better-auth on first use, creates its own
 * database on the same PostgreSQL server, starts it (it creates its tables), measures its idle RSS,
 * signs up its users and loads its two scenarios exactly as the service's. Never throws: a failure is
 * reported in the result.
 */
async function compareBetterAuth(options: BenchOptions, ceilings: Ceilings, ours: ScenarioReport[], run: ComparisonRun): Promise<BetterAuthComparison> {
  const comparison: BetterAuthComparison = { scenarios: [], ratios: [], logLines: [] };
  try {
    comparison.version = await ensureBetterAuthInstalled(log);
    run.database = await createBenchDatabase(options.databaseUrl, 'better_auth_bench');
    log(`better-auth ${comparison.version}: database ${run.database.name} created`);
    run.server = await startBetterAuth(run.database.url);
    log(`better-auth up at ${run.server.url} (pid ${run.server.pid})`);
    comparison.idleRssBytes = await idleRss(run.server.pid);
    log(`better-auth idle RSS: ${mb(comparison.idleRssBytes)} MB`);
    run.monitor = new ProcessMonitor(run.server.pid);
    run.monitor.start();
    for (const scenario of buildBetterAuthScenarios(run.server.url, options, log)) {
      comparison.scenarios.push(await measureScenario(scenario, { url: run.server.url, monitor: run.monitor }, options, ceilings));
    }
    comparison.logLines = run.server.logs.slice(-20);
  } catch (err) {
    comparison.failure = (err as Error).message.slice(0, 1000);
    log(`better-auth: failed: ${comparison.failure}`);
  } finally {
    await stopComparisonRun(run, options.keepDatabase);
  }
  for (const [scenario, counterpart] of Object.entries(BETTER_AUTH_COUNTERPARTS) as [BetterAuthScenarioName, ScenarioName][]) {
    const theirs = measuredCpu(comparison.scenarios, scenario);
    const mine = measuredCpu(ours, counterpart);
    comparison.ratios.push({ scenario, ours: counterpart, ratio: theirs !== undefined && mine ? theirs / mine : undefined });
  }
  return comparison;
}

/** Prints the side-by-side block: each pair's CPU per request and its ratio, and both RSS figures. */
function printComparison(comparison: BetterAuthComparison, ours: ScenarioReport[], idleRssBytes: number, peakRssBytes: number): void {
  console.log(`
side by side with Better Auth ${comparison.version ?? '(not installed)'}, service CPU per request, same run:`);
  if (comparison.failure) console.log(`  not measured: ${comparison.failure.split('\n')[0]}`);
  for (const pair of comparison.ratios) {
    const theirs = measuredCpu(comparison.scenarios, pair.scenario);
    const mine = measuredCpu(ours, pair.ours);
    const ms = (v: number | undefined) => (v === undefined ? 'not measured' : `${v.toFixed(2)} ms`);
    console.log(`  ${pair.scenario.padEnd(24)} ${ms(theirs)}, ours (\`${pair.ours}\`) ${ms(mine)}: ${pair.ratio === undefined ? 'no ratio' : `${pair.ratio.toFixed(2)}x`}`);
  }
  const theirPeak = Math.max(0, ...comparison.scenarios.map((r) => r.peakRssBytes ?? 0));
  const orUnknown = (bytes: number | undefined) => (bytes ? mb(bytes) : '?');
  console.log(`  RSS idle / peak under load: Better Auth ${orUnknown(comparison.idleRssBytes)} / ${orUnknown(theirPeak)} MB, ours ${mb(idleRssBytes)} / ${mb(peakRssBytes)} MB`);
}

async function main(): Promise<void> {
  const options = loadBenchOptions();
  const startedAt = new Date();
  const machineAtStart = machine();
  log(`machine: ${JSON.stringify(machineAtStart)}`);
  log(`options: ${options.durationSeconds} s per scenario, ${options.connections}/${options.hashConnections} connections, ${options.serviceProcesses} service processes`);

  let database: BenchDatabase | undefined;
  let service: ServiceProcess | undefined;
  let seeder: Seeder | undefined;
  let monitor: ProcessMonitor | undefined;
  const comparisonRun: ComparisonRun = {};
  const cleanup = async () => {
    await stopComparisonRun(comparisonRun, options.keepDatabase);
    monitor?.stop();
    await seeder?.close().catch(() => undefined);
    seeder = undefined;
    await service?.stop();
    service = undefined;
    if (database && !options.keepDatabase) await database.drop().catch((err: unknown) => log(`could not drop ${database!.name}: ${String(err)}`));
    else if (database) log(`kept database ${database.name}`);
    database = undefined;
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

  try {
    log('ceiling: argon2id hashes/s on all cores');
    const argon2Ceiling = await measureArgon2(options);
    log(`ceiling: argon2id ${argon2Ceiling.hashesPerSecond.toFixed(1)} hashes/s`);
    log('ceiling: bare node:http JSON answers');
    const httpCeiling = await measureBareHttp(options);
    log(`ceiling: bare http ${httpCeiling.requestsPerSecond.toFixed(0)} req/s`);
    const ceilings: Ceilings = { argon2: argon2Ceiling, http: httpCeiling };

    database = await createBenchDatabase(options.databaseUrl);
    log(`database ${database.name} created`);
    if (options.cpuProfileDir) mkdirSync(options.cpuProfileDir, { recursive: true });
    let embeddedIdleRssBytes: number | undefined;
    if (options.embeddedIdle && options.serviceProcesses === 1) {
      const embedded = await startService({ databaseUrl: undefined, redisUrl: undefined, processes: 1, nodeOptions: options.serviceNodeOptions });
      try {
        embeddedIdleRssBytes = await idleRss(embedded.pid);
      } finally {
        await embedded.stop();
      }
      log(`idle RSS on the embedded database: ${mb(embeddedIdleRssBytes)} MB`);
    }
    service = await startService({ databaseUrl: database.url, redisUrl: options.redisUrl, processes: options.serviceProcesses, cpuProfileDir: options.cpuProfileDir, nodeOptions: options.serviceNodeOptions });
    log(`service up at ${service.url} (pid ${service.pid})`);
    const idleRssBytes = await idleRss(service.pid);
    log(`idle RSS on PostgreSQL: ${mb(idleRssBytes)} MB`);
    monitor = new ProcessMonitor(service.pid);
    monitor.start();
    seeder = await Seeder.connect(database.url);
    const passwordHash = await argon2.hash(BENCH_PASSWORD, ARGON2_OPTIONS);
    const fixture = new BenchFixture(new JsonClient(service.url), seeder, options, passwordHash, log);

    const rows: ScenarioReport[] = [];
    for (const scenario of buildScenarios(fixture, () => ceilings.argon2.hashesPerSecond)) {
      rows.push(await measureScenario(scenario, { url: service.url, monitor }, options, ceilings));
    }
    const errorLines = service.logs.filter((l) => /"level":(50|60)/.test(l));
    if (errorLines.length > 0) log(`the service logged ${errorLines.length} errors; last: ${errorLines.at(-1)}`);
    const betterAuth = options.compare.includes('better-auth') ? await compareBetterAuth(options, ceilings, rows, comparisonRun) : undefined;
    const comparisonRows = betterAuth?.scenarios ?? [];

    const peakRssBytes = Math.max(0, ...rows.map((r) => r.peakRssBytes ?? 0));
    const peakProcessRssBytes = Math.max(0, ...rows.map((r) => r.peakProcessRssBytes ?? 0));
    console.log('');
    printTable([...rows, ...comparisonRows], ceilings);
    console.log(`\nidle service RSS: ${mb(idleRssBytes)} MB on PostgreSQL` +
      (embeddedIdleRssBytes === undefined ? '' : `, ${mb(embeddedIdleRssBytes)} MB on the embedded database`));
    console.log(
      `peak service RSS over all scenarios: ${mb(peakRssBytes)} MB for all ${options.serviceProcesses > 1 ? `${options.serviceProcesses + 1} processes (primary + workers)` : 'of it'}, ` +
        `${mb(peakProcessRssBytes)} MB for the largest process`,
    );
    if (betterAuth) printComparison(betterAuth, rows, idleRssBytes, peakRssBytes);
    const aims = checkAims(rows, peakRssBytes, comparisonRows);
    const missed = printAims(aims);

    const report = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      command: `npm run bench ${process.argv.slice(2).join(' ')}`.trim(),
      machine: { ...machine(), loadAverageAtStart: machineAtStart.loadAverage },
      // the URLs may carry passwords
      options: { ...options, databaseUrl: undefined, redisUrl: undefined },
      ceilings,
      scenarios: rows,
      aims,
      idleRssBytes,
      embeddedIdleRssBytes,
      peakRssBytes,
      peakProcessRssBytes,
      serviceErrorLogLines: errorLines.slice(-20),
      comparisons: betterAuth ? { 'better-auth': betterAuth } : undefined,
    };
    mkdirSync(path.dirname(options.resultsFile), { recursive: true });
    writeFileSync(options.resultsFile, JSON.stringify(report, null, 2) + '\n');
    log(`results written to ${options.resultsFile}`);
    // A benchmark that can fail: a failed scenario or a missed aim is a non-zero exit.
    if ([...rows, ...comparisonRows].some((r) => r.status === 'failed') || betterAuth?.failure) process.exitCode = 1;
    if (missed) {
      log('an aim was missed (see "aims" above): exit code 2');
      process.exitCode ??= 2;
    }
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) console.error(`${(err as Error).message} (see npm run bench -- --help)`);
  else console.error(err);
  process.exit(1);
});
