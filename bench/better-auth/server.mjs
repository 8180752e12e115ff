/**
 * Better Auth for `npm run bench -- --compare better-auth` (docs/performance.md "Against Better
 * Auth"): email and password sign-in, its PostgreSQL adapter (Kysely over a `pg` pool) on the
 * database of `DATABASE_URL`, served by node:http through `toNodeHandler` at `/api/auth/*`, the
 * lightest host Better Auth documents. Its defaults otherwise: scrypt through node:crypto, sessions
 * read from the database on every `get-session` (no cookie cache). Rate limiting is turned off, as
 * the bench scales the service's own limits out of the way; telemetry is off.
 *
 * Plain JavaScript run by Node itself: Better Auth is installed in this folder only (by the bench),
 * not in the project, so nothing here is compiled or type-checked with the service.
 *
 * Environment: `DATABASE_URL` (a database of its own, created by the bench), `PORT`,
 * `BETTER_AUTH_SECRET`. Creates its tables on start (`getMigrations`), then listens on 127.0.0.1.
 */
import { createServer } from 'node:http';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import pg from 'pg';

const port = Number(process.env.PORT);
const baseURL = `http://127.0.0.1:${port}`;

const auth = betterAuth({
  baseURL,
  secret: process.env.BETTER_AUTH_SECRET,
  database: new pg.Pool({ connectionString: process.env.DATABASE_URL }),
  emailAndPassword: { enabled: true },
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
});

const { runMigrations } = await getMigrations(auth.options);
await runMigrations();

const server = createServer(toNodeHandler(auth));
server.listen(port, '127.0.0.1');

const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
