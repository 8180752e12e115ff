import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant } from '../helpers/api.js';
import { freePort } from '../helpers/oidc-provider.js';
import { registerRelyingParty, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The verification snippets of docs/authorization.md "The token your API receives", run as written
 * (only the issuer and audience constants replaced) against a token this service issued: the Python
 * one with Debian's python3-authlib, the Node one with jose. A change to the token that breaks a
 * customer's backend written from the docs fails here.
 */

const INVOICES = 'https://api.example.com/invoices';
const DOC = new URL('../../docs/authorization.md', import.meta.url);

let server: TestServer;
let api: Api;
let publicUrl: string;
let m2m: RelyingParty;
let scratch: string;

beforeAll(async () => {
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  server = await startTestServer({ PORT: String(port), PUBLIC_URL: publicUrl });
  api = new Api(server.url);
  scratch = await mkdtemp(join(tmpdir(), 'backend-verification-'));

  const tenant = await createTenant(api);
  const auth = { token: tenant.accessToken };
  const created = await api.post(`/v1/${tenant.slug}/api-resources`, {
    name: 'Invoices', identifier: INVOICES, permissions: [{ name: 'read:invoices' }, { name: 'write:invoices' }],
  }, auth);
  expect(created.status).toBe(200);
  const role = await api.post(`/v1/${tenant.slug}/roles`, { name: 'Writer', permissions: [{ resource: INVOICES, permission: 'write:invoices' }] }, auth);
  expect(role.status).toBe(200);
  m2m = await registerRelyingParty(api, tenant, publicUrl, 'm2m');
  const apps = await api.get(`/v1/${tenant.slug}/applications`, auth);
  const application = (apps.body.items as { id: string; clientId: string }[]).find((a) => a.clientId === m2m.clientId);
  expect((await api.put(`/v1/${tenant.slug}/applications/${application!.id}/roles`, { roleIds: [role.body.role.id] }, auth)).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The fenced block of docs/authorization.md in `language` under the heading `heading`. */
async function snippet(heading: string, language: string): Promise<string> {
  const doc = await readFile(DOC, 'utf8');
  const section = doc.slice(doc.indexOf(`### ${heading}`));
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)\\n```').exec(section);
  if (!match) throw new Error(`docs/authorization.md has no ${language} block under "${heading}"`);
  return match[1]!;
}

/** The snippet with its example issuer and audience constants pointed at this test's workspace. */
function pointedAt(code: string, issuer: string): string {
  const replaced = code
    .replace(/(ISSUER = )(["'])https:\/\/id\.example\.com\/v1\/acme\/oidc\2/, `$1$2${issuer}$2`)
    .replace(/(AUDIENCE = )(["'])https:\/\/api\.example\.com\/invoices\2/, `$1$2${INVOICES}$2`);
  expect(replaced).toContain(issuer);
  return replaced;
}

function run(command: string, args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function accessToken(): Promise<string> {
  const grant = await oidc.clientCredentialsGrant(m2m.config, { resource: INVOICES, scope: 'read:invoices write:invoices' });
  return grant.access_token;
}

describe('docs/authorization.md verification snippets', () => {
  it('Python (Authlib): grants the permission the role gives, refuses the one it does not, refuses a forged token', async () => {
    const code = pointedAt(await snippet('Python (Authlib)', 'python'), m2m.issuer);
    const token = await accessToken();
    const [head, body] = token.split('.');
    const forged = `${head}.${body}.${Buffer.alloc(64, 1).toString('base64url')}`;
    const driver = `${code}

import sys
def outcome(token, permission):
    try:
        return {"granted": require_permission(token, permission)}
    except Exception as error:
        return {"refused": type(error).__name__}
print(json.dumps([outcome(sys.argv[1], "write:invoices"), outcome(sys.argv[1], "read:invoices"), outcome(sys.argv[2], "write:invoices")]))
`;
    // Debian's interpreter, where Debian's python3-authlib is installed (.ci/run installs it).
    const result = await run('/usr/bin/python3', ['-', token, forged], driver);
    expect(result.code, result.stderr).toBe(0);
    const [granted, notGranted, forgedOutcome] = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(granted).toMatchObject({ granted: { iss: m2m.issuer, aud: INVOICES, client_id: m2m.clientId, sub: m2m.clientId, scope: 'write:invoices' } });
    expect(notGranted).toEqual({ refused: 'PermissionError' });
    expect(forgedOutcome).toEqual({ refused: 'BadSignatureError' });
  });

  it('Node.js (jose): the same token passes for the granted permission and is refused for the other', async () => {
    const code = pointedAt(await snippet('Node.js (jose)', 'js'), m2m.issuer);
    const jose = pathToFileURL(createRequire(import.meta.url).resolve('jose')).href;
    const file = join(scratch, 'require-permission.mjs');
    await writeFile(file, code.replace("from 'jose'", `from '${jose}'`));
    const { requirePermission } = (await import(pathToFileURL(file).href)) as {
      requirePermission: (authorization: string | undefined, permission: string) => Promise<Record<string, unknown>>;
    };
    const token = await accessToken();
    await expect(requirePermission(`Bearer ${token}`, 'write:invoices')).resolves.toMatchObject({ aud: INVOICES, scope: 'write:invoices' });
    await expect(requirePermission(`Bearer ${token}`, 'read:invoices')).rejects.toMatchObject({ status: 403 });
    await expect(requirePermission(undefined, 'write:invoices')).rejects.toMatchObject({ status: 401 });
  });
});
