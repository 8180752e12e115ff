import { fileURLToPath } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { Logger } from 'pino';

/**
 * Young-generation limit in MiB that goes with a heap limit: three semi-spaces of 8 MiB (V8 rounds a
 * semi-space up to a power of two, so 16 to 24 MiB give the same; Node's own default is 16 MiB
 * semi-spaces). A larger one adds to the resident size without lowering the CPU the limit costs,
 * which is in the old generation's collections (docs/performance.md "The heap setting").
 */
const YOUNG_GENERATION_MB = 24;

/**
 * Whether Node was already given an option matching `option`, on its command line (`execArgv`) or in
 * `NODE_OPTIONS`: the operator's choice, which the service's own Node options never override.
 * @param execArgv `process.execArgv`; @param nodeOptions `process.env.NODE_OPTIONS`.
 */
export function nodeOptionGiven(option: RegExp, execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((arg) => option.test(arg));
}

/**
 * The V8 heap limits the service runs under, or undefined to run on the main thread with Node's own
 * sizing. V8 sizes its heap for throughput and, uncapped, lets a busy service grow to several hundred
 * MiB; the limit keeps the resident size near 250 MB, at 1.15 to 1.5 times the CPU per request of no
 * limit on `GET me` (docs/performance.md "The heap setting").
 * A heap size given to Node itself (`--max-old-space-size` on the command line or in `NODE_OPTIONS`)
 * wins, and `MAX_HEAP_MB=0` turns the limit off.
 * @param maxHeapMb `MAX_HEAP_MB` (MiB, 0 = none).
 * @param execArgv `process.execArgv`; @param nodeOptions `process.env.NODE_OPTIONS`.
 */
export function heapLimits(maxHeapMb: number, execArgv: readonly string[], nodeOptions: string | undefined): ResourceLimits | undefined {
  if (nodeOptionGiven(/^--max[-_]old[-_]space[-_]size(=|$)/, execArgv, nodeOptions) || maxHeapMb === 0) return undefined;
  return { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };
}

/**
 * The same limits as Node options, for node:cluster workers (a cluster worker is a process of its own,
 * so the primary starts it with them instead of a thread).
 */
export function heapLimitArgs(limits: ResourceLimits | undefined): string[] {
  if (!limits?.maxOldGenerationSizeMb) return [];
  return [`--max-old-space-size=${limits.maxOldGenerationSizeMb}`, `--max-semi-space-size=${Math.floor((limits.maxYoungGenerationSizeMb ?? YOUNG_GENERATION_MB) / 3)}`];
}

/**
 * Replaces this process with the same program started with `nodeArgs` as Node options
 * (`process.execve`, the same process id, standard streams and environment): the heap limit from
 * {@link heapLimitArgs} and src/async-context-frame.ts. The restarted program finds them in
 * `process.execArgv` and serves on its main thread. For the heap limit this is cheaper than
 * {@link runOnHeapLimitedThread} by the main thread's own isolate, about 15 MB resident
 * (docs/performance.md "The heap setting").
 * Returns false, having replaced nothing, where Node cannot replace a process (Windows, IBM i, Node
 * older than 22.15) or the replacement failed; it does not return otherwise. `process.execve` is
 * experimental in Node 22 and 24 (docs/decisions.md "The heap limit without a thread").
 * @param entry this program's own module; @param nodeArgs options placed before its own.
 */
export function restartWithNodeOptions(entry: URL, nodeArgs: readonly string[]): boolean {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (typeof execve !== 'function' || process.platform === 'win32' || process.platform === ('os400' as NodeJS.Platform)) return false;
  const args = [process.execPath, ...nodeArgs, ...process.execArgv, fileURLToPath(entry), ...process.argv.slice(2)];
  try {
    execve.call(process, process.execPath, args, process.env);
  } catch {
    // Node refused (an unsupported platform) or execve(2) failed: nothing was replaced.
    return false;
  }
  return true;
}

/** Message from the main thread to the service thread: stop as on this signal. */
export interface StopMessage {
  stop: NodeJS.Signals;
}

/**
 * Runs `entry` (this program's own module) on a worker thread whose heap is capped by `limits`, the
 * only way a Node program can cap its own heap once started. The main thread only waits: SIGTERM and
 * SIGINT are passed on as a {@link StopMessage} (signals reach the main thread only), and the process
 * exits with the service thread's exit code. Standard output stays file descriptor 1 for both.
 */
export function runOnHeapLimitedThread(entry: URL, limits: ResourceLimits, logger: Logger): void {
  const service = new Worker(entry, {
    resourceLimits: limits,
    argv: process.argv.slice(2),
    workerData: { stdoutIsTerminal: process.stdout.isTTY === true },
  });
  const stop = (signal: NodeJS.Signals) => service.postMessage({ stop: signal } satisfies StopMessage);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  service.on('error', (err) => {
    logger.fatal({ err }, 'the service thread failed');
    process.exitCode = 1;
  });
  service.on('exit', (code) => process.exit(process.exitCode ?? code));
}
