import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resident set size of one process in bytes (0 when it is gone). */
function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return kb ? Number(kb[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The pids of a process and all its descendants (Linux /proc). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // the process ended while we read
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

/** CPU seconds (user + system) one process has used so far (0 when it is gone). */
function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is stat(5) field 3 (state); utime and stime are fields 14 and 15, in clock ticks.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** `getconf CLK_TCK` on every Linux architecture Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/** What a process tree used during one measurement window. */
export interface ProcessWindow {
  /** Highest summed resident set size of the tree seen, in bytes. */
  peakRssBytes: number;
  /** Highest resident set size of any single process of the tree, in bytes. */
  peakProcessRssBytes: number;
  /** CPU seconds (user + system) the tree used: with the request count, the cost of one request
   *  independent of how loaded the machine is. */
  cpuSeconds: number;
}

/**
 * Samples the summed RSS of a process tree every `intervalMs` and its CPU time, in windows:
 * {@link takeWindow} returns what was used since the previous call.
 */
export class ProcessMonitor {
  private peak = 0;
  private peakProcess = 0;
  private pids: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private samples = 0;
  private cpuAtWindowStart = new Map<number, number>();

  constructor(private readonly root: number, private readonly intervalMs = 100) {}

  start(): void {
    this.pids = processTree(this.root);
    this.takeWindow();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  private sample(): void {
    // Re-read the tree now and then: cluster workers may be replaced.
    if (this.samples++ % 20 === 0) this.pids = processTree(this.root);
    let total = 0;
    for (const pid of this.pids) {
      const rss = rssOf(pid);
      total += rss;
      if (rss > this.peakProcess) this.peakProcess = rss;
    }
    if (total > this.peak) this.peak = total;
  }

  /** Peak RSS and CPU time since the previous call, then starts a new window. */
  takeWindow(): ProcessWindow {
    this.pids = processTree(this.root);
    this.sample();
    let cpuSeconds = 0;
    const now = new Map<number, number>();
    for (const pid of this.pids) {
      const used = cpuSecondsOf(pid);
      now.set(pid, used);
      cpuSeconds += used - (this.cpuAtWindowStart.get(pid) ?? 0);
    }
    this.cpuAtWindowStart = now;
    const window = { peakRssBytes: this.peak, peakProcessRssBytes: this.peakProcess, cpuSeconds };
    this.peak = 0;
    this.peakProcess = 0;
    return window;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * RSS of an idle service: waits `settleMs` after start (start-up garbage collected), then returns
 * the peak summed RSS of its process tree over `windowMs`, in bytes.
 */
export async function idleRss(pid: number, settleMs = 5_000, windowMs = 3_000): Promise<number> {
  await new Promise((r) => setTimeout(r, settleMs));
  const monitor = new ProcessMonitor(pid);
  monitor.start();
  await new Promise((r) => setTimeout(r, windowMs));
  const { peakRssBytes } = monitor.takeWindow();
  monitor.stop();
  return peakRssBytes;
}

/** The service under test, running as its own process tree. */
export interface ServiceProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Log lines at warn level and above (kept for the error report). */
  logs: string[];
  stop(): Promise<void>;
}

/** Waits until `GET url` answers 200, or fails after `timeoutMs`. */
export async function waitForOk(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`process exited with code ${child.exitCode} before ${url} answered`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`). */
export function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Keeps the last 2,000 output lines of a spawned server on `port` and waits until `readyPath` answers
 * 200 (60 s at most); on failure stops it and throws with its last 20 lines.
 * @param name how the error names the server.
 */
export async function watchUntilReady(child: ChildProcess, port: number, readyPath: string, name: string): Promise<ServiceProcess> {
  const logs: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(line);
    if (logs.length > 2000) logs.splice(0, logs.length - 2000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForOk(`${url}${readyPath}`, 60_000, child);
  } catch (err) {
    await stopChild(child);
    throw new Error(`${name} did not start: ${(err as Error).message}\n${logs.slice(-20).join('\n')}`);
  }
  return { url, pid: child.pid!, child, logs, stop: () => stopChild(child) };
}

/**
 * Starts the compiled service (`dist/src/main.js`, built by `npm run build`) on a free port against
 * `databaseUrl` (the embedded database in a fresh `DATA_DIR` when undefined; no Redis when
 * `redisUrl` is undefined), with `processes` cluster workers, fixed bench secrets and rate limits
 * scaled out of the way, and waits for `/ready`.
 */
export async function startService(opts: {
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  processes: number;
  cpuProfileDir?: string | undefined;
  nodeOptions?: string | undefined;
}): Promise<ServiceProcess> {
  const port = await freePort();
  const nodeArgs = opts.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfileDir}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, 'dist/src/main.js'], {
    env: benchServiceEnv({ ...opts, port }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchUntilReady(child, port, '/ready', 'the service');
}

/**
 * The environment of a benchmarked service: this process's, with the database and Redis given (none
 * when undefined), production mode on `127.0.0.1:port`, a fresh `DATA_DIR`, fixed-for-the-run
 * secrets, rate limits scaled out of the way, warnings only in the log, `processes` cluster workers
 * and `nodeOptions` as `NODE_OPTIONS`; `MAX_HEAP_MB` when given.
 */
export function benchServiceEnv(opts: {
  port: number;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  processes: number;
  nodeOptions?: string | undefined;
  maxHeapMb?: string;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  if (opts.databaseUrl !== undefined) env.DATABASE_URL = opts.databaseUrl;
  if (opts.redisUrl !== undefined) env.REDIS_URL = opts.redisUrl;
  if (opts.maxHeapMb !== undefined) env.MAX_HEAP_MB = opts.maxHeapMb;
  return {
    ...env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(opts.port),
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'idp-bench-')),
    JWT_SECRET: randomBytes(48).toString('base64'),
    ENCRYPTION_KEYS: `v1:${randomBytes(32).toString('base64')}`,
    RATE_LIMIT_SCALE: '1000000',
    LOG_LEVEL: 'warn',
    WEB_CONCURRENCY: String(opts.processes),
    NODE_OPTIONS: opts.nodeOptions ?? '',
  };
}
