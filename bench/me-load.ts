/**
 * The built service under `GET me` load, for the tools that watch one process's memory while it
 * serves (`bench/gc-count.ts`, `bench/alloc-profile.ts`; docs/performance.md). Starts
 * `dist/src/main.js` (`npm run build`) with the given Node options on a database of its own, signs
 * in 48 seeded users and hands over a way to send `me` requests on 32 connections, round-robin over
 * their access tokens; the database is dropped and the service stopped afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { RawRequest } from 'autocannon';
import argon2 from 'argon2';
import { ARGON2_OPTIONS } from '../src/security/passwords.js';
import { JsonClient } from './client.js';
import { createBenchDatabase, Seeder } from './database.js';
import { runLoad, type LoadResult } from './load.js';
import { BENCH_PASSWORD } from './scenarios.js';
import { benchServiceEnv, freePort, stopChild, waitForOk } from './service.js';

const CONNECTIONS = 32;
const USERS = 48;

/** What a tool gets while the service runs. */
export interface MeLoad {
  child: ChildProcess;
  /** Lines the service wrote to standard output (with `--trace-gc`, V8's), with when each arrived (epoch ms). */
  output: { at: number; line: string }[];
  /** Sends `me` requests: `amount` of them, or for `seconds` when no amount is given. */
  load(options: { amount?: number; seconds?: number }): Promise<LoadResult>;
}

/**
 * Runs `use` against the built service started with `nodeOptions` (Node's command-line options) and
 * `MAX_HEAP_MB` = `maxHeapMb`, after 5 s of warm-up load.
 * @returns what `use` returns; the service and its database are gone by then.
 */
export async function withMeLoad<T>(maxHeapMb: string, nodeOptions: readonly string[], use: (run: MeLoad) => Promise<T>): Promise<T> {
  const database = await createBenchDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeOptions, 'dist/src/main.js'], {
    env: benchServiceEnv({ port, databaseUrl: database.url, redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379', processes: 1, maxHeapMb }),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const output: MeLoad['output'] = [];
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) output.push({ at: Date.now(), line });
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForOk(`${url}/ready`, 60_000, child);
    const api = new JsonClient(url);
    const created = await api.expectOk('POST', '/v1/tenants', { tenant: { name: 'Me Load' }, admin: { email: 'admin@me-load.bench.test', password: BENCH_PASSWORD } });
    const slug = created.tenantSlug as string;
    const seeder = await Seeder.connect(database.url);
    try {
      await seeder.seedUsers(await seeder.tenantIdOf(slug), 'user', USERS, await argon2.hash(BENCH_PASSWORD, ARGON2_OPTIONS));
    } finally {
      await seeder.close();
    }
    const tokens: string[] = [];
    for (let n = 1; n <= USERS; n++) {
      tokens.push((await api.expectOk('POST', `/v1/${slug}/auth/login`, { email: `user${n}@bench.test`, password: BENCH_PASSWORD })).accessToken as string);
    }
    let next = 0;
    const requests = [{
      method: 'GET',
      path: `/v1/${slug}/me`,
      setupRequest: (req: RawRequest) => ({ ...req, headers: { authorization: `Bearer ${tokens[next++ % tokens.length]!}` } }),
    }];
    const load: MeLoad['load'] = ({ amount, seconds }) => runLoad({ url, connections: CONNECTIONS, durationSeconds: seconds ?? 120, amount, requests });
    await load({ seconds: 5 });
    return await use({ child, output, load });
  } finally {
    await stopChild(child);
    await database.drop();
  }
}
