/**
 * Child-process entry of `startEmbeddedDatabase`: creates a new PGlite data directory (initdb) at
 * `argv[2]` and exits. Run in its own process so the memory initdb takes (about 400 MB, which the
 * WebAssembly runtime never hands back) is returned to the system when it exits
 * (docs/performance.md, "Memory").
 */
import { openEmbeddedStore } from './embedded-store.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: embedded-init <pgdata directory>');
const db = await openEmbeddedStore(dir);
await db.close();
