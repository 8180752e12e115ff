import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createServices, type AppServices } from './app-services.js';
import type { Config } from './config.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './db/embedded.js';
import { openDatabase } from './db/orm.js';
import { createLogger } from './logger.js';
import { createApp } from './rest/app.js';
import { scheduleErasureSweep } from './services/lifecycle/erasure-service.js';
import { answerClientError } from './rest/http-hardening.js';
import { serveMetrics } from './rest/metrics-server.js';
import { preloadCommonPasswords } from './security/common-passwords.js';

/** A running service instance. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>` (or the configured host). */
  url: string;
  port: number;
  /** `http://…:<METRICS_PORT>/metrics` when `METRICS_ENABLED`. */
  metricsUrl?: string;
  services: AppServices;
  /**
   * Graceful shutdown: stops accepting connections, lets in-flight requests finish (up to
   * `graceMs` milliseconds), then closes the database and any other connection.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts one instance: the database (embedded PGlite when `DATABASE_URL` is unset), pending
 * migrations, the services and the HTTP listener on `config.host:config.port` (0 = any free port).
 * @throws ConfigError / DatabaseUnavailableError with a message saying what to fix.
 */
export async function startServer(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  for (const name of config.generatedSecrets) {
    logger.warn(`${name} is not set: using a generated development value kept in ${config.dataDir}/secrets.json`);
  }
  let embedded: EmbeddedDatabase | undefined;
  let orm: MikroORM | undefined;
  try {
    if (!config.databaseUrl) {
      embedded = await startEmbeddedDatabase(config.dataDir);
      logger.info({ dataDir: config.dataDir }, 'DATABASE_URL is not set: using the embedded PostgreSQL (PGlite)');
    }
    orm = await openDatabase(config.databaseUrl ?? embedded!.url, embedded ? 1 : config.databasePoolMax, logger);
  } catch (err) {
    await orm?.close(true);
    await embedded?.close();
    throw err;
  }
  const services = createServices(config, logger, orm);
  // the common-password list of the password policy, built once per process before the first sign-up needs it
  preloadCommonPasswords();
  // Probe every dependency once before listening, so that one connecting in the background (Redis)
  // is up for the first request; a failing probe does not stop the start (/ready reports it).
  await Promise.allSettled([...services.readiness.values()].map((probe) => probe()));
  const app = createApp(services);
  const server: Server = createServer(app);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError(logger));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  logger.info({ port }, 'listening');
  const metricsUrl = services.metrics ? await serveMetrics(services, config, logger) : undefined;
  if (config.jobWorkerEnabled) {
    services.jobWorker.start();
    // first of the disposers: jobs in progress finish while the mail transport and database are still open
    services.disposers.unshift(() => services.jobWorker.stop());
  }
  services.disposers.push(
    scheduleErasureSweep(services.erasure, () => orm.em.fork() as EntityManager, config.erasureSweepIntervalSeconds, logger),
  );

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000): Promise<void> => {
    closing ??= (async () => {
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await drained;
      clearTimeout(timer);
      for (const dispose of services.disposers) await dispose().catch((err: unknown) => logger.warn({ err }, 'dispose failed'));
      await orm.close(true);
      await embedded?.close();
      logger.info('stopped');
    })();
    return closing;
  };
  return { url: `http://${host}:${port}`, port, metricsUrl, services, close };
}
