import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from './src/entities/index.js';
import { MIGRATIONS } from './src/migrations/index.js';

/** Connection settings that differ between deployments. */
export interface OrmConnectionOptions {
  /** `postgres://…` URL of the server (the embedded PGlite socket or a real PostgreSQL). */
  clientUrl: string;
  /** Most pooled connections; the embedded PGlite socket serialises queries, so it uses 1. */
  poolMax?: number;
  /** Receives the driver's (knex's) own warnings, e.g. a pooled connection the server closed; default: stdout. */
  onDriverWarning?: (message: string) => void;
}

/**
 * MikroORM configuration for PostgreSQL: the entity schemas of src/entities and the committed
 * migrations of src/migrations, listed explicitly so TypeScript sources and compiled output agree.
 */
export function createOrmConfig(opts: OrmConnectionOptions): Options {
  return defineConfig({
    clientUrl: opts.clientUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: true },
    // A request waits at most 10 s for a connection (knex's default is 60 s), so while PostgreSQL is
    // away requests fail promptly; dead connections are discarded and new ones opened on demand.
    pool: { min: 0, max: opts.poolMax ?? 10, idleTimeoutMillis: 30_000, acquireTimeoutMillis: 10_000 },
    driverOptions: {
      connection: { application_name: 'tenant-identity' },
      ...(opts.onDriverWarning ? { log: { warn: opts.onDriverWarning, error: opts.onDriverWarning } } : {}),
    },
    migrations: {
      migrationsList: MIGRATIONS,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      emit: 'ts',
      path: 'src/migrations',
    },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    debug: false,
  });
}

/** Used by the MikroORM CLI: `DATABASE_URL` must point at a PostgreSQL server. */
export default createOrmConfig({ clientUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
