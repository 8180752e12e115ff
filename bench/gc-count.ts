/**
 * `npx tsx bench/gc-count.ts [MAX_HEAP_MB] [node options…]`: how often V8 collects under one heap
 * setting, counted per 10,000 `GET me` requests (docs/performance.md "The heap setting"). Counts do not
 * depend on what else the machine runs, unlike CPU time. Starts the built service (`npm run build`)
 * with `--trace-gc` and the given Node options on its own database, signs in 48 seeded users, warms up
 * for 5 s, then sends exactly 30,000 `me` requests on 32 connections and prints one JSON line: the
 * scavenges and mark-compacts per 10,000 requests, the service CPU per request and its peak RSS.
 *
 * Examples: `npx tsx bench/gc-count.ts 128` (the default limit on its thread), `npx tsx
 * bench/gc-count.ts 0 --max-old-space-size=128 --max-semi-space-size=16` (Node's flags, main thread).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RawRequest } from 'autocannon';
import argon2 from 'argon2';
import { ARGON2_OPTIONS } from '../src/security/passwords.js';
import { JsonClient } from './client.js';
import { createBenchDatabase, Seeder } from './database.js';
import { runLoad } from './load.js';
import { BENCH_PASSWORD } from './scenarios.js';
import { freePort, ProcessMonitor, stopChild, waitForOk } from './service.js';

const REQUESTS = 30_000;
const CONNECTIONS = 32;
const USERS = 48;

/** One line of V8's `--trace-gc`, with when it arrived. */
interface TraceLine {
  at: number;
  line: string;
}

async function main(): Promise<void> {
  const [maxHeapMb = '128', ...nodeOptions] = process.argv.slice(2);
  const database = await createBenchDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['--trace-gc', ...nodeOptions, 'dist/src/main.js'], {
    env: {
      ...env,
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'idp-gc-')),
      JWT_SECRET: randomBytes(48).toString('base64'),
      ENCRYPTION_KEYS: `v1:${randomBytes(32).toString('base64')}`,
      RATE_LIMIT_SCALE: '1000000',
      LOG_LEVEL: 'warn',
      WEB_CONCURRENCY: '1',
      MAX_HEAP_MB: maxHeapMb,
      NODE_OPTIONS: '',
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const trace: TraceLine[] = [];
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) trace.push({ at: Date.now(), line });
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForOk(`${url}/ready`, 60_000, child);
    const api = new JsonClient(url);
    const created = await api.expectOk('POST', '/v1/tenants', { tenant: { name: 'GC Count' }, admin: { email: 'admin@gc-count.bench.test', password: BENCH_PASSWORD } });
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
    await runLoad({ url, connections: CONNECTIONS, durationSeconds: 5, requests });
    const monitor = new ProcessMonitor(child.pid!);
    monitor.start();
    const startedAt = Date.now();
    const result = await runLoad({ url, connections: CONNECTIONS, durationSeconds: 120, amount: REQUESTS, requests });
    const used = monitor.takeWindow();
    monitor.stop();
    await new Promise((r) => setTimeout(r, 300));
    const during = trace.filter((t) => t.at >= startedAt).map((t) => t.line);
    const per10k = (pattern: RegExp) => (during.filter((l) => pattern.test(l)).length * 10_000) / result.ok;
    console.log(JSON.stringify({
      maxHeapMb: Number(maxHeapMb),
      nodeOptions,
      requests: result.ok,
      errors: result.errors,
      scavengesPer10k: per10k(/Scavenge/),
      markCompactsPer10k: per10k(/Mark-Compact|Mark-Sweep/),
      cpuMsPerRequest: (used.cpuSeconds * 1000) / result.ok,
      peakRssMb: Math.round(used.peakRssBytes / 1024 / 1024),
    }));
  } finally {
    await stopChild(child);
    await database.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
