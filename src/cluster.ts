import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/**
 * Runs `workers` copies of the service under node:cluster (`WEB_CONCURRENCY` > 1): the primary only
 * forks, restarts and stops workers; each worker is a whole service instance (its own database pool)
 * sharing the listening port. Workers start one after the other, so the first one alone applies
 * pending migrations. A worker that dies before it ever listened stops the whole group with its exit
 * code (bad configuration, database down); one that dies later is replaced. SIGTERM/SIGINT are passed
 * on to every worker, and the primary exits once all of them have shut down cleanly.
 * @param nodeOptions extra Node options of every worker (the heap limit, src/heap-limit.ts, and the
 *   context frame, src/async-context-frame.ts).
 */
export async function runClusterPrimary(workers: number, logger: Logger, nodeOptions: readonly string[] = []): Promise<void> {
  if (nodeOptions.length) cluster.setupPrimary({ execArgv: [...process.execArgv, ...nodeOptions] });
  let stopping = false;
  const live = new Set<Worker>();

  const stopAll = (signal: NodeJS.Signals, exitCode: number) => {
    stopping = true;
    if (live.size === 0) process.exit(exitCode);
    for (const worker of live) worker.process.kill(signal);
    cluster.on('exit', () => {
      if (live.size === 0) process.exit(exitCode);
    });
  };

  const fork = (): Promise<void> =>
    new Promise((resolve) => {
      const worker = cluster.fork();
      live.add(worker);
      let listening = false;
      worker.once('listening', () => {
        listening = true;
        resolve();
      });
      worker.once('exit', (code, signal) => {
        live.delete(worker);
        if (stopping) return;
        if (!listening) {
          logger.fatal({ pid: worker.process.pid, code, signal }, 'worker failed to start: stopping');
          stopAll('SIGTERM', code || 1);
          return;
        }
        logger.error({ pid: worker.process.pid, code, signal }, 'worker died: starting a replacement');
        void fork();
      });
    });

  process.once('SIGTERM', () => stopAll('SIGTERM', 0));
  process.once('SIGINT', () => stopAll('SIGTERM', 0));
  for (let i = 0; i < workers && !stopping; i++) await fork();
  logger.info({ workers }, 'all workers listening');
}
