import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** A running embedded PostgreSQL (PGlite) reachable over the Postgres wire protocol on loopback. */
export interface EmbeddedDatabase {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, for the ordinary pg driver. */
  url: string;
  /** Stops the socket server and closes PGlite, flushing it to disk. */
  close(): Promise<void>;
}

/**
 * PostgreSQL settings of the embedded database on top of PGlite's defaults. PGlite's WebAssembly
 * memory only grows, and its default 128 MB of shared buffers end up resident: 16 MB is plenty for
 * the single-process installations the embedded database serves and takes about 170 MB off the
 * service's RSS (docs/performance.md, "Memory").
 */
const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB', '-c', 'wal_buffers=1MB'];

/**
 * Starts PGlite stored in `<dataDir>/pgdata` and serves it on 127.0.0.1 on a free port through
 * `@electric-sql/pglite-socket`, so the same driver, SQL and migrations run as on PostgreSQL.
 * @param dataDir the service `DATA_DIR`; created when missing.
 */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const dir = path.join(dataDir, 'pgdata');
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir, { extensions: { pg_trgm }, startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS] });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 32 });
  await server.start();
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;
  return {
    url,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
