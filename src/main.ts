import { ConfigError, loadConfigOrExit } from './config.js';
import { DatabaseUnavailableError } from './db/orm.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

/** `npm start`: validate the configuration, migrate, serve; stop cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  try {
    const server = await startServer(config, logger);
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
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
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
