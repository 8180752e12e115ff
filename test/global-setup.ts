import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/db/embedded.js';
import { openDatabase } from '../src/db/orm.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the database this test run owns, already migrated. */
    databaseUrl: string;
    /** True when the run is on the embedded PGlite rather than a PostgreSQL server. */
    embeddedDatabase: boolean;
  }
}

/**
 * Gives the run its own database: a fresh `idp_test_*` database on `TEST_DATABASE_URL`'s server
 * (dropped afterwards), or an embedded PGlite in a temporary directory. Migrations run once here.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  let databaseUrl: string;
  let teardown: () => Promise<void>;
  if (serverUrl) {
    const name = `idp_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    teardown = async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    };
  } else {
    const dir = mkdtempSync(path.join(tmpdir(), 'idp-test-'));
    const embedded: EmbeddedDatabase = await startEmbeddedDatabase(dir);
    databaseUrl = embedded.url;
    teardown = async () => {
      await embedded.close();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const orm = await openDatabase(databaseUrl, 1);
  await orm.close(true);
  project.provide('databaseUrl', databaseUrl);
  project.provide('embeddedDatabase', !serverUrl);
  return teardown;
}
