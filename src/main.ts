import './node-version.js';
import './threadpool.js';
import cluster from 'node:cluster';
import { isMainThread, parentPort } from 'node:worker_threads';
import { runClusterPrimary } from './cluster.js';
import { ConfigError, loadConfigOrExit } from './config.js';
import { asyncContextFrameArgs } from './async-context-frame.js';
import { heapLimitArgs, heapLimits, restartWithNodeOptions, runOnHeapLimitedThread, type StopMessage } from './heap-limit.js';
import { createLogger } from './logger.js';
import { startupSummary } from './startup-summary.js';

/**
 * `npm start`: validate the configuration, migrate, serve; stop cleanly on SIGTERM/SIGINT.
 * With `WEB_CONCURRENCY` > 1 this process becomes a node:cluster primary running that many workers;
 * the primary never loads the service itself (the server modules are imported by workers only),
 * which keeps its memory small, and starts them with its Node options: the heap limit `MAX_HEAP_MB`
 * and, on Node 22, AsyncLocalStorage's context frame (src/async-context-frame.ts). A single process
 * replaces itself with the same program under those options, or, where Node cannot (Windows), runs
 * the service on a worker thread capped at `MAX_HEAP_MB`
 * (src/heap-limit.ts); running from TypeScript source (tsx, the
 * tests and `npm run dev`) it serves on the main thread, since tsx's loader does not reach threads.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  const limits = heapLimits(config.maxHeapMb, process.execArgv, process.env.NODE_OPTIONS);
  const nodeArgs = [...heapLimitArgs(limits), ...asyncContextFrameArgs(process.execArgv, process.env.NODE_OPTIONS)];
  if (config.webConcurrency > 1 && cluster.isPrimary) {
    await runClusterPrimary(config.webConcurrency, logger, nodeArgs);
    return;
  }
  if (isMainThread && cluster.isPrimary && nodeArgs.length > 0 && import.meta.url.endsWith('.js')) {
    const entry = new URL(import.meta.url);
    if (restartWithNodeOptions(entry, nodeArgs)) return;
    // Node cannot replace the process here: the heap limit on a thread; without one, serve as is
    if (limits) {
      runOnHeapLimitedThread(entry, limits, logger);
      return;
    }
  }
  const { startServer } = await import('./server.js');
  const { DatabaseUnavailableError } = await import('./db/orm.js');
  try {
    const server = await startServer(config, logger);
    if (cluster.isPrimary || cluster.worker?.id === 1) for (const line of startupSummary(config, server.url)) logger.info(line);
    const shutdown = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      server.close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    if (parentPort) parentPort.once('message', (message: StopMessage) => shutdown(message.stop));
    else {
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    }
  } catch (err) {
    if (err instanceof DatabaseUnavailableError || err instanceof ConfigError) {
      logger.fatal(err.message);
      process.exit(2);
    }
    logger.fatal({ err }, 'start-up failed');
    process.exit(1);
  }
}

void main();
