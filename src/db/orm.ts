import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createOrmConfig } from '../../mikro-orm.config.js';
import { redactUrl } from '../lib/redact-url.js';

/** Raised when the database cannot be reached at start-up; the message names the address. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

/** PostgreSQL advisory-lock key held while migrating, so instances started together migrate in turn. */
export const MIGRATION_LOCK_KEY = 7_283_640_021;

/**
 * Applies pending migrations while holding the session-level advisory lock MIGRATION_LOCK_KEY on a
 * connection of its own: several instances starting at once on one database migrate one after the
 * other (the later ones find nothing pending). A crashed holder's lock ends with its session.
 */
async function migrateUnderLock(orm: MikroORM): Promise<void> {
  const knex = orm.em.getConnection().getKnex();
  const lockConnection: unknown = await knex.client.acquireConnection();
  try {
    await knex.raw('select pg_advisory_lock(?)', [MIGRATION_LOCK_KEY]).connection(lockConnection);
    try {
      await orm.getMigrator().up();
    } finally {
      await knex.raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]).connection(lockConnection);
    }
  } finally {
    await knex.client.releaseConnection(lockConnection);
  }
}

/**
 * Connects MikroORM to PostgreSQL and applies every pending committed migration (serialised across
 * instances by an advisory lock; with a single pooled connection, the embedded case, without it).
 * @param poolMax most pooled connections.
 * @param logger receives the driver's warnings (e.g. a connection the server closed) as JSON lines.
 * @throws DatabaseUnavailableError when the server does not answer.
 */
export async function openDatabase(clientUrl: string, poolMax?: number, logger?: Logger): Promise<MikroORM> {
  const onDriverWarning = logger ? (message: string) => logger.warn({ driver: String(message) }, 'database driver warning') : undefined;
  let orm: MikroORM;
  try {
    orm = await MikroORM.init(createOrmConfig({ clientUrl, poolMax, onDriverWarning }));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new DatabaseUnavailableError(`cannot reach the database at ${redactUrl(clientUrl, 'DATABASE_URL')}: ${reason}`);
  }
  const status = await orm.checkConnection();
  if (!status.ok) {
    await orm.close(true);
    throw new DatabaseUnavailableError(`cannot reach the database at ${redactUrl(clientUrl, 'DATABASE_URL')}: ${status.reason}`);
  }
  if (poolMax === 1) await orm.getMigrator().up();
  else await migrateUnderLock(orm);
  return orm;
}

/** Runs `select 1` on a connection of the pool (the readiness probe of the database); throws when it cannot. */
export async function pingDatabase(em: EntityManager): Promise<void> {
  await em.execute('select 1');
}

interface TarnPool {
  /** The most connections the pool opens (`DATABASE_POOL_MAX`). */
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The database pool's use (knex's tarn pool), for the metrics; undefined when it cannot be read. */
export function databasePoolUse(orm: MikroORM): { used: number; free: number; pending: number; max: number } | undefined {
  const pool = (orm.em.getConnection().getKnex() as unknown as { client?: { pool?: TarnPool } }).client?.pool;
  if (!pool) return undefined;
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires(), max: pool.max };
}
