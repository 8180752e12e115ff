import { MikroORM } from '@mikro-orm/postgresql';
import { createOrmConfig } from '../../mikro-orm.config.js';
import { redactUrl } from '../lib/redact-url.js';

/** Raised when the database cannot be reached at start-up; the message names the address. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

/**
 * Connects MikroORM to PostgreSQL and applies every pending committed migration.
 * @param poolMax most pooled connections.
 * @throws DatabaseUnavailableError when the server does not answer.
 */
export async function openDatabase(clientUrl: string, poolMax?: number): Promise<MikroORM> {
  const orm = await MikroORM.init(createOrmConfig({ clientUrl, poolMax }));
  const status = await orm.checkConnection();
  if (!status.ok) {
    await orm.close(true);
    throw new DatabaseUnavailableError(`cannot reach the database at ${redactUrl(clientUrl, 'DATABASE_URL')}: ${status.reason}`);
  }
  await orm.getMigrator().up();
  return orm;
}
