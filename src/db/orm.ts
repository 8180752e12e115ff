import { MikroORM } from '@mikro-orm/postgresql';
import { createOrmConfig } from '../../mikro-orm.config.js';

/** Raised when the database cannot be reached at start-up; the message names the address. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable DATABASE_URL>';
  }
}

/**
 * Connects MikroORM to PostgreSQL and applies every pending committed migration.
 * @param poolMax most pooled connections.
 * @throws DatabaseUnavailableError when the server does not answer.
 */
export async function openDatabase(clientUrl: string, poolMax?: number): Promise<MikroORM> {
  let orm: MikroORM;
  try {
    orm = await MikroORM.init(createOrmConfig({ clientUrl, poolMax }));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new DatabaseUnavailableError(`cannot reach the database at ${redactUrl(clientUrl)}: ${reason}`);
  }
  const status = await orm.checkConnection();
  if (!status.ok) {
    await orm.close(true);
    throw new DatabaseUnavailableError(`cannot reach the database at ${redactUrl(clientUrl)}: ${status.reason}`);
  }
  await orm.getMigrator().up();
  return orm;
}
