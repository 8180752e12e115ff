import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.js';

const run = promisify(execFile);
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** The shell block under "## Walk-through with curl" in README.md. */
function walkthroughScript(): string {
  const readme = readFileSync(path.resolve(import.meta.dirname, '..', 'README.md'), 'utf8');
  const section = readme.split('## Walk-through with curl')[1]!;
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README has no walk-through block');
  return block[1]!;
}

describe('README walk-through', () => {
  it('runs as written against a running service', async () => {
    const script = walkthroughScript().replaceAll('http://localhost:3000', server.url);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { timeout: 60_000 });
    // 1. tenant creation prints a session, 3. /me prints the admin, 5. logout prints ok
    expect(stdout).toContain('"tenantSlug":"acme-inc"');
    expect(stdout).toContain('"email":"owner@acme.test"');
    expect(stdout).toContain('"role":"Admin"');
    expect(stdout.trim().endsWith('{"ok":true}')).toBe(true);
    expect(stdout).not.toContain('"code":');
  });
});
