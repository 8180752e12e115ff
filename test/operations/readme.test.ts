import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** The shell blocks of the "## Walk-through with curl" section of README.md, in order. */
function walkthroughBlocks(): string[] {
  const readme = readFileSync(path.resolve(import.meta.dirname, '../..', 'README.md'), 'utf8');
  const section = readme.split('## Walk-through with curl')[1]!.split('\n## ')[0]!;
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  if (blocks.length < 2) throw new Error('README walk-through blocks are missing');
  return blocks;
}

describe('README walk-through', () => {
  it('runs as written against a running service', async () => {
    const script = walkthroughBlocks()[0]!.replaceAll('http://localhost:3000', server.url);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { timeout: 60_000 });
    // 1. tenant creation prints a session, 3. /me prints the admin, 5. logout prints ok
    expect(stdout).toContain('"tenantSlug":"acme-inc"');
    expect(stdout).toContain('"email":"owner@acme.test"');
    expect(stdout).toContain('"role":"Admin"');
    expect(stdout.trim().endsWith('{"ok":true}')).toBe(true);
    expect(stdout).not.toContain('"code":');
  });

  it('runs the administration block as written after it', async () => {
    const [, admin] = walkthroughBlocks().map((b) => b.replaceAll('http://localhost:3000', server.url));
    // the block goes on in the first block's shell: BASE is what the first set
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', admin!], { timeout: 60_000, env: { ...process.env, BASE: server.url } });
    // invite accepted (a session with tenantSlug), an API key shown once, the audit log read back
    expect(stdout).toContain('"tenantSlug":"acme-inc"');
    expect(stdout).toContain('"email":"colleague@acme.test"');
    expect(stdout).toMatch(/"plaintext":"ak_live_[0-9A-Za-z]{32,}"/);
    expect(stdout).toContain('"action":"InviteAccepted"');
    expect(stdout).not.toContain('"code":"');
  });
});
