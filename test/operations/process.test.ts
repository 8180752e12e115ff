import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from '../helpers/oidc-provider.js';
import { TEST_ENCRYPTION_KEYS, TEST_JWT_SECRET } from '../helpers/server.js';

const root = path.resolve(import.meta.dirname, '../..');

/** Runs `src/main.ts` as `npm start` would (through tsx instead of the compiled output). */
function startProcess(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let out = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'idp-proc-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

const exitCode = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

async function waitForPort(output: () => string): Promise<number> {
  for (let i = 0; i < 600; i++) {
    const match = /"port":(\d+).*"msg":"listening"/.exec(output());
    if (match) return Number(match[1]);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`service did not start:\n${output()}`);
}

describe('the service process', () => {
  it('serves, then stops cleanly on SIGTERM, finishing an in-flight request', async () => {
    const { child, output } = startProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: inject('databaseUrl'),
      JWT_SECRET: TEST_JWT_SECRET,
      ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    });
    const exited = exitCode(child);
    const port = await waitForPort(output);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(await health.json()).toEqual({ status: 'ok' });
    // an argon2 hash keeps this request in flight while SIGTERM arrives
    const inFlight = fetch(`http://127.0.0.1:${port}/v1/tenants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Shutdown ${Date.now()}`, email: 'x@example.com', password: 'a long enough password' }),
    });
    await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await exited).toBe(0);
    expect(output()).toContain('"msg":"stopped"');
  });

  it('refuses to start with a bad setting and says which', async () => {
    const { child, output } = startProcess({ JWT_SECRET: 'too-short' });
    expect(await exitCode(child)).toBe(2);
    expect(output()).toMatch(/JWT_SECRET must be at least 32 bytes/);
  });

  it('refuses to start when the database cannot be reached and says where', async () => {
    const { child, output } = startProcess({ DATABASE_URL: 'postgres://postgres:secretpw@127.0.0.1:1/nothing', JWT_SECRET: TEST_JWT_SECRET, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS });
    expect(await exitCode(child)).toBe(2);
    expect(output()).toMatch(/cannot reach the database at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/nothing/);
    expect(output()).not.toContain('secretpw');
  });

  it('says at start-up where it listens, the API reference, the database and mail modes, and a first command', async () => {
    const databaseUrl = inject('databaseUrl');
    const { child, output } = startProcess({
      PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    });
    const exited = exitCode(child);
    const port = await waitForPort(output);
    for (let i = 0; i < 100 && !output().includes('First command'); i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const text = output();
    expect(text).toContain(`listening on http://127.0.0.1:${port}`);
    expect(text).toContain(`API reference: http://127.0.0.1:${port}/v1/openapi.json`);
    const db = new URL(databaseUrl);
    expect(text).toContain(`Database: PostgreSQL at ${db.hostname}:${db.port || '5432'}${db.pathname}`);
    expect(text).toContain('Mail: development outbox');
    expect(text).toContain(`curl -s -X POST http://127.0.0.1:${port}/v1/tenants`);
    if (db.password) expect(text).not.toContain(db.password);
  });

  it('points people at PUBLIC_URL (localhost by default), where passkeys and mailed links work, not at the listener\'s 127.0.0.1', async () => {
    const port = await freePort();
    const { child, output } = startProcess({
      PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: inject('databaseUrl'), JWT_SECRET: TEST_JWT_SECRET, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    });
    const exited = exitCode(child);
    await waitForPort(output);
    for (let i = 0; i < 100 && !output().includes('First command'); i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const text = output();
    expect(text).toContain(`listening on http://127.0.0.1:${port} (public URL http://localhost:${port})`);
    expect(text).toContain(`Pages: http://localhost:${port}/ (sign-in)`);
    expect(text).toContain(`API reference: http://localhost:${port}/v1/openapi.json`);
    expect(text).toContain(`curl -s -X POST http://localhost:${port}/v1/tenants`);
  });
});
