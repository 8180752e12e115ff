import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';
import { UNLISTED_REASONS } from '../../src/rest/openapi-errors.js';
import { expectError } from '../helpers/api.js';
import { conformanceProblems } from '../helpers/openapi-conformance.js';
import { useTestServer } from '../helpers/suite.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

const suite = useTestServer();

/** The served document, written to a file for the command-line linters. */
async function documentFile(): Promise<string> {
  const res = await suite.api.get('/v1/openapi.json');
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(res.body, null, 2));
  return file;
}

describe('the OpenAPI document', () => {
  it('is what the generator builds, and a valid OpenAPI 3.1 document (swagger-parser)', async () => {
    const res = await suite.api.get('/v1/openapi.json');
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(suite.server.services.config.publicUrl))));
    await expect(SwaggerParser.validate(await documentFile())).resolves.toBeTruthy();
  });

  it('lints clean with Redocly recommended: no error, no warning', async () => {
    const file = await documentFile();
    const { stdout } = await run(bin('redocly'), ['lint', file, '--config', path.join(root, 'redocly.yaml'), '--format', 'json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { message: string }[] };
    expect(report.problems.map((p) => p.message)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('lints clean with Spectral oas: no error, no warning', async () => {
    const file = await documentFile();
    // exit code 1 on any warning or error; the text report says which
    const outcome = await run(bin('spectral'), ['lint', file, '--ruleset', path.join(root, '.spectral.yaml'), '--fail-severity', 'warn']).then(
      ({ stdout }) => ({ failed: false, stdout }),
      (err: { stdout?: string }) => ({ failed: true, stdout: err.stdout ?? String(err) }),
    );
    expect(outcome.failed, outcome.stdout).toBe(false);
    expect(outcome.stdout).toMatch(/No results with a severity of 'warn' or higher found/);
  });

  it('gives every operation an operationId, a description, declared tags and, when public, an empty security requirement', async () => {
    const doc = (await suite.api.get('/v1/openapi.json')).body as {
      tags: { name: string }[];
      paths: Record<string, Record<string, { operationId?: string; description?: string; tags?: string[]; security?: unknown[] }>>;
    };
    const declared = new Set(doc.tags.map((t) => t.name));
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.operationId, `${method} ${p}`).toBeTruthy();
        expect(op.description, `${method} ${p}`).toBeTruthy();
        for (const tag of op.tags ?? []) expect(declared.has(tag), `${method} ${p} tag ${tag}`).toBe(true);
        if (op.security !== undefined) expect(Array.isArray(op.security)).toBe(true);
      }
    }
    expect(doc.paths['/v1/{tenantSlug}/auth/login']!.post!.security).toEqual([]);
    expect(doc.paths['/v1/{tenantSlug}/me']!.get!.security).toEqual([{ Authorization: [] }]);
  });

  it('lists the details.reason values of every error response of every operation', () => {
    const doc = JSON.parse(JSON.stringify(buildOpenApiDocument('http://127.0.0.1'))) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }> }>>;
    };
    const unlisted: string[] = [];
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const details = response.content?.['application/json']?.schema?.properties?.details as { properties?: { reason?: { description?: string } } } | undefined;
          if (Number(status) >= 400 && details?.properties?.reason?.description === UNLISTED_REASONS) unlisted.push(`${method.toUpperCase()} ${p} ${status}`);
        }
      }
    }
    expect(unlisted).toEqual([]);
  });

  it('documents the real error envelope with per-operation reasons (mfa_required on login, not on GET me)', async () => {
    const login = conformanceProblems('POST', '/v1/acme/auth/login', 401, 'application/json', {
      code: 'UNAUTHORIZED', message: 'A second factor is required', details: { reason: 'mfa_required', methods: ['totp'] },
    });
    expect(login).toEqual([]);
    const me = conformanceProblems('GET', '/v1/acme/me', 401, 'application/json', {
      code: 'UNAUTHORIZED', message: 'A second factor is required', details: { reason: 'mfa_required', methods: ['totp'] },
    });
    expect(me.join()).toMatch(/allowed values/);
    const extraField = conformanceProblems('GET', '/v1/acme/me', 401, 'application/json', {
      code: 'UNAUTHORIZED', message: 'x', details: { reason: 'invalid_token' }, issues: [],
    });
    expect(extraField.join()).toMatch(/additional properties/);
    const undocumentedStatus = conformanceProblems('GET', '/v1/acme/me', 409, 'application/json', { code: 'CONFLICT', message: 'x', details: { reason: 'x' } });
    expect(undocumentedStatus.join()).toMatch(/status not documented/);
  });

  it('is readable from any origin (CORS *), preflight included; other routes keep the strict CORS', async () => {
    const origin = 'https://docs.example.org';
    const preflight = await fetch(`${suite.server.url}/v1/openapi.json`, {
      method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const res = await fetch(`${suite.server.url}/v1/openapi.json`, { headers: { origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    const other = await fetch(`${suite.server.url}/v1/acme/me`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a route without a tenant in the error envelope', async () => {
    expectError(await suite.api.post('/v1/auth/login', { email: 'a@b.co', password: 'x' }), 404, 'NOT_FOUND');
    expectError(await suite.api.get('/v1/auth/login'), 404, 'NOT_FOUND');
  });
});
