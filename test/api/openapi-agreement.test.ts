import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, PASSWORD } from '../helpers/api.js';
import { createPrincipals, expectEnvelope, send, type Principals } from '../helpers/principals.js';
import type { JsonSchema } from '../helpers/routes.js';
import { objectArbitrary } from '../helpers/schema-arbitrary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The OpenAPI document the service serves and the service itself must agree on what a request body
 * may be: bodies generated from the document's own request schemas (valid ones, and ones broken with
 * wrong types, strings for booleans and numbers, edge strings, unknown fields) are judged by Ajv
 * against the document, then sent. A body the document accepts must pass the service's validation
 * (any other answer is fine: 2xx, 401, 409, a semantic 400); a body the document refuses must be
 * refused with 400. So a coerced body, a looser or stricter server-side rule, or a schema the
 * generator renders differently from the Zod input fails here.
 */

const RUNS = 40;
fc.configureGlobal({ seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : 20261124 });

/** `details.reason`s of a request refused by input validation (the document's "Invalid body"). */
const VALIDATION_REASONS = new Set(['validation_failed', 'malformed_json', 'body_not_object', 'body_too_deep', 'invalid_characters', 'unsupported_media_type']);

type OpenApiDocument = { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema & { oneOf?: JsonSchema[]; anyOf?: JsonSchema[] } }> } }>> };

let server: TestServer;
let api: Api;
let principals: Principals;
let doc: OpenApiDocument;
let webhookId: string;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats(ajv);

/**
 * A NUL character or a lone surrogate: refused everywhere with 400 `invalid_characters`
 * (docs/api-rules.md), a rule JSON Schema cannot state, so such bodies are left out of the property.
 */
function hasUnsafeText(body: unknown): boolean {
  const text = collectText(body);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return true;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return true;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return true;
  }
  return false;
}

function collectText(value: unknown): string {
  if (typeof value === 'string') return `${value}\n`;
  if (typeof value !== 'object' || value === null) return '';
  return Object.entries(value).map(([k, v]) => `${k}\n${collectText(v)}`).join('');
}

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
  principals = await createPrincipals(api, server);
  doc = (await api.get('/v1/openapi.json')).body as OpenApiDocument;
  const created = await api.post(`/v1/${principals.tenant.slug}/webhooks`, { url: 'https://hooks.example.com/in' }, { token: principals.adminToken });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  webhookId = created.body.webhook.id as string;
});
afterAll(async () => {
  await server.close();
});

interface Operation {
  method: 'POST' | 'PATCH';
  /** The path as the document names it. */
  path: string;
  /** The concrete URL. */
  url: () => string;
  token: () => string | undefined;
}

const slug = () => principals.tenant.slug;
const operations: Operation[] = [
  { method: 'POST', path: '/v1/tenants', url: () => '/v1/tenants', token: () => undefined },
  { method: 'POST', path: '/v1/{tenantSlug}/auth/signup', url: () => `/v1/${slug()}/auth/signup`, token: () => undefined },
  { method: 'POST', path: '/v1/{tenantSlug}/auth/login', url: () => `/v1/${slug()}/auth/login`, token: () => undefined },
  { method: 'POST', path: '/v1/{tenantSlug}/auth/mfa/complete', url: () => `/v1/${slug()}/auth/mfa/complete`, token: () => undefined },
  { method: 'POST', path: '/v1/{tenantSlug}/invites', url: () => `/v1/${slug()}/invites`, token: () => principals.adminToken },
  { method: 'PATCH', path: '/v1/{tenantSlug}/tenant', url: () => `/v1/${slug()}/tenant`, token: () => principals.adminToken },
  { method: 'POST', path: '/v1/{tenantSlug}/webhooks', url: () => `/v1/${slug()}/webhooks`, token: () => principals.adminToken },
  { method: 'PATCH', path: '/v1/{tenantSlug}/webhooks/{id}', url: () => `/v1/${slug()}/webhooks/${webhookId}`, token: () => principals.adminToken },
  { method: 'POST', path: '/v1/{tenantSlug}/api-keys', url: () => `/v1/${slug()}/api-keys`, token: () => principals.adminToken },
  { method: 'PATCH', path: '/v1/{tenantSlug}/users/{userId}', url: () => `/v1/${slug()}/users/${principals.memberId}`, token: () => principals.adminToken },
];

/** The request-body schema the document gives an operation. */
function bodySchemaOf(op: Operation): JsonSchema & { oneOf?: JsonSchema[] } {
  const schema = doc.paths[op.path]?.[op.method.toLowerCase()]?.requestBody?.content['application/json']?.schema;
  expect(schema, `${op.method} ${op.path} has no JSON body in the document`).toBeDefined();
  return schema!;
}

/** Bodies near the document's schema: each form of a `oneOf`, with junk mixed in. */
function bodies(schema: JsonSchema & { oneOf?: JsonSchema[] }): fc.Arbitrary<Record<string, unknown>> {
  const forms = schema.oneOf ?? [schema];
  return fc.oneof(...forms.map((form) => objectArbitrary(form, 1)));
}

describe('the OpenAPI document and the service agree on request bodies', () => {
  it.each(operations.map((op) => [`${op.method} ${op.path}`, op] as const))('%s', async (_name, op) => {
    const validate = ajv.compile(bodySchemaOf(op));
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(bodies(bodySchemaOf(op)), async (body) => {
        fc.pre(!hasUnsafeText(body));
        const documentAccepts = validate(body) === true;
        const res = await send(server.url, op.method, op.url(), { token: op.token(), body });
        const context = `${op.method} ${op.url()} ${JSON.stringify(body).slice(0, 300)} (document ${documentAccepts ? 'accepts' : `refuses: ${ajv.errorsText(validate.errors)}`}) -> ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, context).toBeLessThan(500);
        if (res.status >= 400) expectEnvelope(res, context);
        const refusedAsInvalid = res.status === 400 && VALIDATION_REASONS.has(String(res.json?.details?.reason));
        if (documentAccepts) {
          accepted++;
          expect(refusedAsInvalid, context).toBe(false);
        } else {
          refused++;
          expect(res.status, context).toBe(400);
        }
      }),
      { numRuns: RUNS, maxSkipsPerRun: 10 },
    );
    expect(accepted + refused).toBe(RUNS);
    // both sides of the property were exercised
    expect(refused).toBeGreaterThan(0);
  });

  it('accepts what the document accepts at the edges: accented workspace names, upper-case domains, percent-encoded slugs', async () => {
    const name = `Émile Crème ${Date.now().toString(36)}`;
    const created = await api.post('/v1/tenants', { tenant: { name }, admin: { email: `emile-${Date.now()}@example.com`, password: PASSWORD } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.tenantSlug ?? created.body.tenant?.slug).toMatch(/^emile-creme-/);
    const refused = await api.post('/v1/tenants', { tenant: { name: '東京' }, admin: { email: `tokyo-${Date.now()}@example.com`, password: PASSWORD } });
    expect(refused.status).toBe(400);
    expect(refused.body.details.reason).toBe('validation_failed');

    const patched = await api.patch(`/v1/${slug()}/tenant`, { signupPolicy: 'Domains', signupEmailDomains: ['Example.COM'] }, { token: principals.adminToken });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.signupEmailDomains ?? patched.body.tenant?.signupEmailDomains).toEqual(['example.com']);
    await api.patch(`/v1/${slug()}/tenant`, { signupPolicy: 'Open', signupEmailDomains: [] }, { token: principals.adminToken });

    const encoded = `/v1/${encodeURIComponent(slug()).replace(/^./, (c) => `%${c.charCodeAt(0).toString(16)}`)}/tenant`;
    const res = await send(server.url, 'GET', encoded, { token: principals.adminToken });
    expect(res.status, `${encoded}: ${res.text}`).toBe(200);
    expect(res.json.slug).toBe(slug());
  });

  it('refuses a body mixing the two forms of POST tenants, in the document and in the service', async () => {
    const validate = ajv.compile(bodySchemaOf(operations[0]!));
    const mixed = { name: 'Mixed Forms', email: `mixed-${Date.now()}@example.com`, password: PASSWORD, tenant: { name: 'Mixed Forms' } };
    expect(validate(mixed)).toBe(false);
    const res = await api.post('/v1/tenants', mixed);
    expect(res.status).toBe(400);
    expect(res.body.details.reason).toBe('validation_failed');
  });

  it('answers an unknown path, or an unknown method on a known path, 404 with details.reason not_found', async () => {
    for (const [method, url] of [['PUT', `/v1/${slug()}/tenant`], ['GET', '/v1/no/such/route'], ['DELETE', '/v1/tenants']] as const) {
      const res = await send(server.url, method, url, { token: principals.adminToken });
      expect(res.status, `${method} ${url}`).toBe(404);
      expectEnvelope(res, `${method} ${url}`);
      expect(res.json.details.reason).toBe('not_found');
    }
  });

  it('documents the provider callback\'s 303 to the hosted page and mfa/complete\'s need for one code', () => {
    const callback = doc.paths['/v1/{tenantSlug}/oauth/idp/callback']?.get as { responses: Record<string, unknown> } | undefined;
    expect(Object.keys(callback?.responses ?? {})).toContain('303');
    const mfa = bodySchemaOf(operations.find((o) => o.path.endsWith('/mfa/complete'))!) as { anyOf?: { required: string[] }[] };
    expect(mfa.anyOf?.map((a) => a.required)).toEqual([['totpCode'], ['emailOtpCode'], ['recoveryCode']]);
  });
});
