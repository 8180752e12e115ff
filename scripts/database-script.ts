import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { loadConfigOrExit, type Config } from '../src/config.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/db/embedded.js';
import { DatabaseUnavailableError, openDatabase } from '../src/db/orm.js';
import { createLogger } from '../src/logger.js';

/**
 * Runs an operator command against the service's database, with the service's own configuration
 * (the same environment variables): opens PostgreSQL, or the embedded PGlite when `DATABASE_URL` is
 * unset (stop the service first: PGlite serves one process at a time), runs `task`, closes, and exits
 * with the task's code; 2 on a configuration or database error, 1 on an unexpected failure.
 * @param name what the command does, for the failure line on stderr.
 */
export function runDatabaseScript(name: string, task: (orm: MikroORM, config: Config, logger: Logger) => Promise<number>): void {
  const run = async (): Promise<number> => {
    const config = loadConfigOrExit();
    const logger = createLogger(config.logLevel);
    let embedded: EmbeddedDatabase | undefined;
    try {
      if (!config.databaseUrl) embedded = await startEmbeddedDatabase(config.dataDir);
      const orm = await openDatabase(config.databaseUrl ?? embedded!.url, embedded ? 1 : undefined);
      try {
        return await task(orm as MikroORM, config, logger);
      } finally {
        await orm.close(true);
      }
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) {
        logger.fatal(err.message);
        return 2;
      }
      throw err;
    } finally {
      await embedded?.close();
    }
  };
  run().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${name} failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
