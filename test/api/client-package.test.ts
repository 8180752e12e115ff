import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/suite.js';

/**
 * The client package as a third party gets it: `npm pack` of packages/client, installed (offline,
 * from the npm cache) into a fresh Vite + React TypeScript project with the template's strict
 * tsconfig, type-checked with `tsc -b`, bundled by Vite and run against the service.
 */

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const suite = useTestServer();

const version = (name: string) => (JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** Runs a command, failing with its output. */
async function sh(cwd: string, command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } });
    return stdout + stderr;
  } catch (err) {
    const { stdout, stderr, message } = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${message}\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

/**
 * A package-lock.json for the fresh project, taken from this repository's lock (same versions and
 * integrity hashes), so that `npm ci --offline` installs it from the npm cache without asking the
 * registry. Node's resolution is followed: a nested `node_modules` first, then the hoisted copy.
 */
function projectLock(manifest: { dependencies: Record<string, string>; devDependencies: Record<string, string> }, tarball: string): object {
  const rootLock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const packages: Record<string, LockEntry> = {
    '': { name: 'third-party-app', version: '0.0.0', dependencies: manifest.dependencies, devDependencies: manifest.devDependencies },
  };
  const client = JSON.parse(readFileSync(path.join(root, 'packages', 'client', 'package.json'), 'utf8')) as LockEntry;
  packages['node_modules/@tenant-identity/client'] = {
    version: client.version, resolved: `file:${tarball}`, license: 'MIT', dependencies: client.dependencies, peerDependencies: client.peerDependencies,
  };
  const resolve = (from: string, name: string): string | undefined => {
    for (let dir = from; ; dir = dir.slice(0, dir.lastIndexOf('/node_modules/'))) {
      const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (rootLock.packages[candidate] && !candidate.startsWith('packages/')) return candidate;
      if (!dir.includes('/node_modules/')) return rootLock.packages[`node_modules/${name}`] ? `node_modules/${name}` : undefined;
    }
  };
  const queue = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((n) => n !== '@tenant-identity/client').map((n) => `node_modules/${n}`);
  queue.push(...Object.keys(client.dependencies ?? {}).map((n) => `node_modules/${n}`));
  while (queue.length > 0) {
    const key = queue.pop()!;
    if (packages[key]) continue;
    const entry = rootLock.packages[key];
    if (!entry) throw new Error(`${key} is not in package-lock.json: add it to the root devDependencies`);
    const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const resolved = entry.resolved ?? `https://registry.npmjs.org/${name}/-/${name.split('/').at(-1)}-${entry.version}.tgz`;
    packages[key] = { ...entry, resolved, dev: undefined, devOptional: undefined, peer: undefined };
    const peers = Object.keys(entry.peerDependencies ?? {}).filter((n) => !entry.peerDependenciesMeta?.[n]?.optional);
    for (const dep of [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {}), ...peers]) {
      const found = resolve(key, dep);
      if (found) queue.push(found);
      else if (!(dep in (entry.optionalDependencies ?? {}))) throw new Error(`${dep} (needed by ${key}) is not in package-lock.json`);
    }
  }
  return { name: 'third-party-app', version: '0.0.0', lockfileVersion: 3, requires: true, packages };
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The files of `npm create vite@latest -- --template react-ts` that matter here, plus the calls under test. */
function writeProject(dir: string, tarball: string): void {
  const manifest = {
    dependencies: {
      '@tenant-identity/client': `file:${tarball}`,
      '@trpc/client': version('@trpc/client'),
      '@trpc/server': version('@trpc/server'),
      react: version('react'),
      'react-dom': version('react-dom'),
    },
    devDependencies: {
      '@types/react': version('@types/react'),
      '@types/react-dom': version('@types/react-dom'),
      '@vitejs/plugin-react': version('@vitejs/plugin-react'),
      typescript: version('typescript'),
      vite: version('vite'),
    },
  };
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'third-party-app', private: true, version: '0.0.0', type: 'module', ...manifest }, null, 2),
    'package-lock.json': JSON.stringify(projectLock(manifest, tarball), null, 2),
    'tsconfig.json': JSON.stringify({ files: [], references: [{ path: './tsconfig.app.json' }, { path: './tsconfig.node.json' }] }),
    'tsconfig.app.json': JSON.stringify({
      compilerOptions: {
        tsBuildInfoFile: './node_modules/.tmp/tsconfig.app.tsbuildinfo',
        target: 'ES2022',
        useDefineForClassFields: true,
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        module: 'ESNext',
        types: ['vite/client'],
        skipLibCheck: true,
        moduleResolution: 'bundler',
        allowImportingTsExtensions: true,
        verbatimModuleSyntax: true,
        moduleDetection: 'force',
        noEmit: true,
        jsx: 'react-jsx',
        strict: true,
        noUnusedLocals: true,
        noUnusedParameters: true,
        erasableSyntaxOnly: true,
        noFallthroughCasesInSwitch: true,
        noUncheckedSideEffectImports: true,
      },
      include: ['src'],
    }),
    // a stricter consumer: the package's own declarations checked too (skipLibCheck off); tRPC's
    // declarations need the Disposable types of ES2026's explicit resource management
    'tsconfig.libcheck.json': JSON.stringify({
      compilerOptions: {
        target: 'ES2022', lib: ['ES2022', 'ESNext.Disposable', 'DOM'], module: 'ESNext', moduleResolution: 'bundler',
        types: [], strict: true, skipLibCheck: false, noEmit: true,
      },
      files: ['node_modules/@tenant-identity/client/dist/index.d.ts'],
    }),
    'tsconfig.node.json': JSON.stringify({
      compilerOptions: {
        tsBuildInfoFile: './node_modules/.tmp/tsconfig.node.tsbuildinfo',
        target: 'ES2023',
        lib: ['ES2023'],
        module: 'ESNext',
        types: [],
        skipLibCheck: true,
        moduleResolution: 'bundler',
        allowImportingTsExtensions: true,
        verbatimModuleSyntax: true,
        moduleDetection: 'force',
        noEmit: true,
        strict: true,
        noUnusedLocals: true,
        noUnusedParameters: true,
        erasableSyntaxOnly: true,
        noFallthroughCasesInSwitch: true,
        noUncheckedSideEffectImports: true,
      },
      include: ['vite.config.ts'],
    }),
    'vite.config.ts': "import { defineConfig } from 'vite';\nimport react from '@vitejs/plugin-react';\n\nexport default defineConfig({ plugins: [react()] });\n",
    'index.html': '<!doctype html>\n<html lang="en"><body><div id="root"></div><script type="module" src="/src/main.tsx"></script></body></html>\n',
    'src/main.tsx': [
      "import { StrictMode } from 'react';",
      "import { createRoot } from 'react-dom/client';",
      "import { App } from './App.tsx';",
      '',
      "createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);",
      '',
    ].join('\n'),
    'src/App.tsx': [
      "import { useState } from 'react';",
      "import { createRestClient } from '@tenant-identity/client';",
      '',
      'const rest = createRestClient(window.location.origin);',
      '',
      'export function App() {',
      "  const [reason, setReason] = useState<string>('');",
      '  const signIn = async () => {',
      "    const { error } = await rest.POST('/v1/{tenantSlug}/auth/login', {",
      "      params: { path: { tenantSlug: 'acme' } },",
      "      body: { email: 'a@acme.test', password: 'secret' },",
      '    });',
      "    if (error?.details.reason === 'mfa_required') setReason(`second factor: ${(error.details.methods ?? []).join(', ')}`);",
      "    else setReason(error?.details.reason ?? 'signed in');",
      '  };',
      '  return <button onClick={() => void signIn()}>{reason || "Sign in"}</button>;',
      '}',
      '',
    ].join('\n'),
    'src/calls.ts': [
      "import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';",
      "import { createRestClient, type AppRouter } from '@tenant-identity/client';",
      '',
      '/** Calls the service through both clients; every line is type-checked against the package. */',
      'export async function callService(baseUrl: string, suffix: string): Promise<Record<string, unknown>> {',
      '  const rest = createRestClient(baseUrl);',
      "  const email = `owner-${suffix}@example.com`;",
      "  const password = 'correct horse battery staple';",
      "  const created = await rest.POST('/v1/tenants', { body: { name: `Client ${suffix}`, email, password } });",
      "  if (!created.data) throw new Error(`tenant not created: ${created.error?.details.reason}`);",
      '  const { tenantSlug, accessToken } = created.data;',
      "  const wrong = await rest.POST('/v1/{tenantSlug}/auth/login', { params: { path: { tenantSlug } }, body: { email, password: 'not the password' } });",
      "  const loginReason: 'invalid_credentials' | 'mfa_required' | string | undefined = wrong.error?.details.reason;",
      "  const me = await rest.GET('/v1/{tenantSlug}/me', { params: { path: { tenantSlug } }, headers: { authorization: `Bearer ${accessToken}` } });",
      '  const createdAt: string | undefined = me.data?.createdAt;',
      '  const trpc = createTRPCClient<AppRouter>({',
      "    links: [httpLink({ url: `${baseUrl}/trpc`, headers: () => ({ authorization: `Bearer ${accessToken}` }) })],",
      '  });',
      '  const viaTrpc = await trpc.me.get.query({ tenantSlug });',
      "  const role: 'Admin' | 'Member' = viaTrpc.role;",
      '  let trpcReason: unknown;',
      '  try {',
      "    await trpc.auth.login.mutate({ tenantSlug, email, password: 'not the password' });",
      '  } catch (err) {',
      '    if (err instanceof TRPCClientError) trpcReason = (err as TRPCClientError<AppRouter>).data?.details.reason;',
      '  }',
      '  return { tenantSlug, loginReason, createdAt, email: viaTrpc.email, role, trpcReason };',
      '}',
      '',
    ].join('\n'),
  };
  // The mistakes the package must catch at compile time (each line fails `tsc -b` if it compiles).
  files['src/type-errors.ts'] = [
    "import { createTRPCClient, httpLink } from '@trpc/client';",
    "import { createRestClient, type AppRouter } from '@tenant-identity/client';",
    '',
    'export async function mistakes(): Promise<void> {',
    "  const rest = createRestClient('http://localhost');",
    '  // @ts-expect-error neither body form is complete',
    "  await rest.POST('/v1/tenants', { body: {} });",
    '  // @ts-expect-error initial-verify needs code or totpCode',
    "  await rest.POST('/v1/{tenantSlug}/auth/totp/initial-verify', { params: { path: { tenantSlug: 'a' } }, body: { email: 'a@b.co', password: 'p' } });",
    "  const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: 'http://localhost/trpc' })] });",
    '  // @ts-expect-error tenantSlug is required',
    '  await trpc.me.get.query({});',
    '}',
    '',
  ].join('\n');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
}

describe('the client package (packages/client) from its packed tarball', () => {
  let project: string;

  beforeAll(async () => {
    await sh(root, npm, ['run', 'build', '--silent', '-w', '@tenant-identity/client']);
    const packDir = mkdtempSync(path.join(tmpdir(), 'client-pack-'));
    await sh(path.join(root, 'packages', 'client'), npm, ['pack', '--pack-destination', packDir, '--silent']);
    const tarball = path.join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);
    project = mkdtempSync(path.join(tmpdir(), 'third-party-app-'));
    writeProject(project, tarball);
    await sh(project, npm, ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error']);
  }, 600_000);

  it('installs without the server: no tenant-identity, MikroORM, express or argon2 in the project', () => {
    const installed = readdirSync(path.join(project, 'node_modules'));
    for (const name of ['tenant-identity', '@mikro-orm', 'express', 'argon2', '@electric-sql', 'zod']) expect(installed).not.toContain(name);
    const manifest = JSON.parse(readFileSync(path.join(project, 'node_modules', '@tenant-identity', 'client', 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(['openapi-fetch']);
  });

  it('type-checks with the Vite React template tsconfig (strict, erasableSyntaxOnly), and catches wrong calls', async () => {
    await sh(project, process.execPath, [path.join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-b']);
  }, 300_000);

  it('passes a type-check of its own declarations with skipLibCheck off', async () => {
    await sh(project, process.execPath, [path.join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.libcheck.json']);
  }, 300_000);

  it('bundles with Vite and calls the service through the REST and tRPC clients', async () => {
    const vite = path.join(project, 'node_modules', 'vite', 'bin', 'vite.js');
    await sh(project, process.execPath, [vite, 'build', '--logLevel', 'error']);
    await sh(project, process.execPath, [vite, 'build', '--ssr', 'src/calls.ts', '--outDir', 'dist-ssr', '--logLevel', 'error']);
    const runner = path.join(project, 'run-calls.mjs');
    writeFileSync(
      runner,
      "import { callService } from './dist-ssr/calls.js';\nconsole.log(JSON.stringify(await callService(process.argv[2], process.argv[3])));\n",
    );
    const suffix = Math.random().toString(36).slice(2, 10);
    const output = await sh(project, process.execPath, [runner, suite.server.url, suffix]);
    const result = JSON.parse(output.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(result).toMatchObject({
      tenantSlug: `client-${suffix}`,
      loginReason: 'invalid_credentials',
      email: `owner-${suffix}@example.com`,
      role: 'Admin',
      trpcReason: 'invalid_credentials',
    });
    expect(typeof result.createdAt).toBe('string');
  }, 300_000);
});
