import './threadpool.js';
import { loadConfigOrExit } from './config.js';
import { createLogger } from './logger.js';

/**
 * `npm run worker`: a process that only runs the job queue (mail, webhook deliveries) against
 * `DATABASE_URL`, for deployments that keep it apart from the HTTP instances (set `JOB_WORKER=false`
 * on those). Applies pending migrations like `npm start`; stops cleanly on SIGTERM/SIGINT after the
 * jobs in progress. The embedded database serves one process only, so DATABASE_URL is required.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  if (!config.databaseUrl) {
    logger.fatal('npm run worker needs DATABASE_URL: the embedded database runs its worker inside npm start');
    process.exit(2);
  }
  const { openDatabase } = await import('./db/orm.js');
  const { createServices } = await import('./app-services.js');
  const orm = await openDatabase(config.databaseUrl, config.databasePoolMax, logger);
  const services = createServices(config, logger, orm);
  services.jobWorker.start();
  if (services.metrics) {
    const { serveMetrics } = await import('./rest/metrics-server.js');
    await serveMetrics(services, config, logger);
  }
  logger.info({ workerId: services.jobWorker.workerId }, 'job worker started');
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    void (async () => {
      await services.jobWorker.stop();
      for (const dispose of services.disposers) await dispose().catch((err: unknown) => logger.warn({ err }, 'dispose failed'));
      await orm.close(true);
      process.exit(0);
    })();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

void main();
