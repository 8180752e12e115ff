import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/**
 * PostgreSQL settings of the embedded database on top of PGlite's defaults. PGlite's WebAssembly
 * memory only grows, and its default 128 MB of shared buffers end up resident: 16 MB is plenty for
 * the single-process installations the embedded database serves and takes about 170 MB off the
 * service's RSS (docs/performance.md, "Memory").
 */
const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB', '-c', 'wal_buffers=1MB'];

/**
 * Opens (creating it when the directory is empty) the PGlite database stored in `dir`, with the
 * extensions and settings every embedded start uses.
 */
export function openEmbeddedStore(dir: string): Promise<PGlite> {
  return PGlite.create(dir, { extensions: { pg_trgm }, startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS] });
}
