import { fork } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { openEmbeddedStore } from './embedded-store.js';

/** A running embedded PostgreSQL (PGlite) reachable over the Postgres wire protocol on loopback. */
export interface EmbeddedDatabase {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, for the ordinary pg driver. */
  url: string;
  /** Stops the socket server and closes PGlite, flushing it to disk. */
  close(): Promise<void>;
}

/**
 * Creates a new data directory in a child process (see embedded-init.ts): initdb's memory goes
 * back to the system when the child exits, instead of staying in the service's RSS for good.
 * Under tsx (tests, `npm run dev`) the child gets the same TypeScript loader.
 * @throws Error when the child fails.
 */
async function initialiseDataDirectory(dir: string): Promise<void> {
  const here = fileURLToPath(import.meta.url);
  const typescript = here.endsWith('.ts');
  const entry = path.join(path.dirname(here), typescript ? 'embedded-init.ts' : 'embedded-init.js');
  const child = fork(entry, [dir], { execArgv: typescript ? ['--import', 'tsx'] : [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`initialising the embedded database in ${dir} failed (exit ${code}): ${stderr.slice(-2000)}`);
}

/**
 * Starts PGlite stored in `<dataDir>/pgdata` and serves it on 127.0.0.1 on a free port through
 * `@electric-sql/pglite-socket`, so the same driver, SQL and migrations run as on PostgreSQL.
 * @param dataDir the service `DATA_DIR`; created when missing.
 */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const dir = path.join(dataDir, 'pgdata');
  mkdirSync(dir, { recursive: true });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await initialiseDataDirectory(dir);
  const db = await openEmbeddedStore(dir);
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
