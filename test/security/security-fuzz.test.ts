import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember, unique } from '../helpers/api.js';
import { createPrincipals, expectEnvelope, type Principals, send } from '../helpers/principals.js';
import { ACCESS_CLASSES, inputAsServerSees, inputJsonSchema, listRoutes, type RouteInfo, toRequest } from '../helpers/routes.js';
import { EDGE_STRINGS, objectArbitrary, sampleValue } from '../helpers/schema-arbitrary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Property-based tests over every route's input schema (fast-check), and raw malformed HTTP:
 * never a 5xx, always the error envelope, and an invalid request leaves the database untouched
 * (OWASP ASVS V1/V2 validation, V16 error handling).
 */

/** Runs per route and property: enough to reach every field several times, small enough for 2 cores. */
const RUNS = 20;
// Reproducible by default, so CI cannot flake; FC_SEED=<n> explores other cases.
fc.configureGlobal({ seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : 20261123 });

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
});
afterAll(async () => {
  await server.close();
});

/** The credential a route needs to get past authentication: none, a Member's token, or the Admin's. */
function credentialFor(route: RouteInfo, p: Principals): string | undefined {
  const access = ACCESS_CLASSES[route.procedure];
  if (access === 'public') return undefined;
  return access === 'admin' || access === 'securityAdmin' || access === 'adminUser' || access === 'adminSession' ? p.adminToken : p.memberToken;
}

/**
 * A digest of every row that belongs to a tenant, over every table with a `tenant_id` column (found
 * in the catalogue, so tables added later are included) and the tenant's own row.
 */
async function tenantFingerprint(tenantId: string): Promise<Record<string, string>> {
  const em = server.services.orm.em.fork();
  const tables = (await em.execute(
    `select table_name from information_schema.columns
      where column_name = 'tenant_id' and table_schema = current_schema() order by table_name`,
  )) as { table_name: string }[];
  const out: Record<string, string> = {};
  for (const { table_name: table } of tables) {
    const [row] = (await em.execute(
      `select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from "${table}" t where tenant_id = ?`,
      [tenantId],
    )) as { n: number; h: string }[];
    out[table] = `${row!.n}:${row!.h}`;
  }
  const [tenant] = (await em.execute(`select md5(t::text) as h from tenant t where id = ?`, [tenantId])) as { h: string }[];
  out.tenant = tenant!.h;
  return out;
}

const routes = listRoutes();

/** A route's inputs as fast-check generates them, with the fixture tenant's slug kept (mostly). */
function inputsFor(route: RouteInfo, p: Principals, junkWeight: number): fc.Arbitrary<Record<string, unknown>> {
  return objectArbitrary(inputJsonSchema(route), junkWeight).map((input) => {
    if (route.pathParams.includes('tenantSlug')) input.tenantSlug = p.tenant.slug;
    for (const name of route.pathParams) if (input[name] === undefined || input[name] === null || input[name] === '') input[name] = 'x';
    return input;
  });
}

describe('fuzzing every route from its input schema', () => {
  it.each(routes.map((r) => [`${r.procedure} (${r.method} ${r.path})`, r] as const))('%s: never 5xx, always the envelope', async (_n, route) => {
    const principals = await createPrincipals(api, server);
    const token = credentialFor(route, principals);
    await fc.assert(
      fc.asyncProperty(inputsFor(route, principals, 1), async (input) => {
        const { url, body } = toRequest(route, input);
        const res = await send(server.url, route.method, url, { token, body });
        const context = `${route.method} ${url} ${JSON.stringify(body)?.slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, context).toBeLessThan(500);
        if (res.status >= 400) expectEnvelope(res, context);
        // The downloads that are not JSON: the audit export's CSV starts with its header line; NDJSON (the
        // users export, an import job's failure report) is one JSON object a line.
        else if (res.headers.get('content-type')?.startsWith('text/csv')) expect(res.text, context).toMatch(/^createdAt,action,/);
        else if (res.headers.get('content-type')?.startsWith('application/x-ndjson')) {
          for (const line of res.text.split('\n').filter(Boolean)) expect(JSON.parse(line), context).toBeTypeOf('object');
        }
        else expect(res.json, context).toBeTypeOf('object');
      }),
      { numRuns: RUNS },
    );
  });

  const withFields = routes.filter((r) => Object.keys(inputJsonSchema(r).properties ?? {}).some((k) => !r.pathParams.includes(k)));

  it.each(withFields.map((r) => [`${r.procedure} (${r.method} ${r.path})`, r] as const))(
    '%s: an invalid input is refused with 400 and writes nothing',
    async (_n, route) => {
      const principals = await createPrincipals(api, server);
      const token = credentialFor(route, principals);
      // Warm-up: the REST adapter adjusts the shared schemas (query coercion) on a route's first call.
      await send(server.url, route.method, toRequest(route, { ...(sampleValue(inputJsonSchema(route)) as object), tenantSlug: principals.tenant.slug }).url, { token, body: route.usesBody ? {} : undefined });
      const before = await tenantFingerprint(principals.tenant.id);
      let refused = 0;
      const details = await fc.check(
        fc.asyncProperty(inputsFor(route, principals, 3), async (input) => {
          fc.pre(!route.input.safeParse(inputAsServerSees(route, input)).success);
          const { url, body } = toRequest(route, input);
          const res = await send(server.url, route.method, url, { token, body });
          const context = `${route.method} ${url} ${JSON.stringify(body)?.slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, context).toBe(400);
          expectEnvelope(res, context);
          expect(res.json.code, context).toBe('BAD_REQUEST');
          refused++;
        }),
        { numRuns: RUNS, maxSkipsPerRun: 20 },
      );
      // A property failure fails the test; running out of invalid inputs only means the schema
      // accepts almost anything over HTTP (e.g. optional free-text query parameters).
      if (details.failed && details.counterexample !== null) throw new Error(fc.defaultReportMessage(details));
      if (!details.failed) expect(refused).toBeGreaterThan(0);
      expect(await tenantFingerprint(principals.tenant.id)).toEqual(before);
    },
  );
});

describe('raw malformed requests', () => {
  const bodyRoutes = routes.filter((r) => r.usesBody);
  const MALFORMED_BODIES = [
    '{', '{"email":', '{"a":1,}', "{'a':1}", 'NaN', '"just a string"', '42', 'null', 'true', '[]', '[{}]', '\u0000',
    '{"email": "\\u0000"}', '{"email": "\\ud800"}', '['.repeat(50_000), `{"a":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_001)}`,
  ];
  /** Well-formed but hostile JSON objects: prototype pollution probes, duplicate keys, a BOM. */
  const ODD_BODIES = [
    '{"__proto__": {"role": "Admin"}, "constructor": {"prototype": {"x": 1}}}', '{"email":"a@b.co","email":"c@d.co"}', '\ufeff{}',
  ];

  it.each(bodyRoutes.map((r) => [`${r.procedure} (${r.method} ${r.path})`, r] as const))('%s: bad JSON, wrong content types, huge bodies', async (_n, route) => {
    const principals = await createPrincipals(api, server);
    const token = credentialFor(route, principals);
    const url = toRequest(route, { ...(sampleValue(inputJsonSchema(route)) as object), tenantSlug: principals.tenant.slug }).url;
    const before = await tenantFingerprint(principals.tenant.id);
    const cases: { body: string; headers?: Record<string, string> }[] = [
      ...MALFORMED_BODIES.map((body) => ({ body })),
      { body: '{}', headers: { 'content-type': 'text/plain' } },
      { body: 'email=a%40b.co&password=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { body: '--b\r\nContent-Disposition: form-data; name="email"\r\n\r\na@b.co\r\n--b--', headers: { 'content-type': 'multipart/form-data; boundary=b' } },
      { body: '<xml/>', headers: { 'content-type': 'application/xml' } },
      { body: '{}', headers: { 'content-type': 'application/json; charset=utf-16' } },
      { body: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'br' } },
      { body: JSON.stringify({ padding: 'x'.repeat(200_000) }) },
    ];
    for (const { body, headers } of cases) {
      const res = await send(server.url, route.method, url, { token, body, headers });
      const context = `${route.method} ${url} ${JSON.stringify(headers ?? {})} ${body.slice(0, 80)} -> ${res.status} ${res.text.slice(0, 300)}`;
      expect(res.status, context).toBeLessThan(500);
      expect([400, 413], context).toContain(res.status);
      expectEnvelope(res, context);
    }
    // A second tenant: an odd body may be a valid call (e.g. logout-all) and change that tenant's rows.
    const odd = await createPrincipals(api, server);
    const oddToken = credentialFor(route, odd);
    const oddUrl = toRequest(route, { ...(sampleValue(inputJsonSchema(route)) as object), tenantSlug: odd.tenant.slug }).url;
    for (const body of ODD_BODIES) {
      const res = await send(server.url, route.method, oddUrl, { token: oddToken, body });
      const context = `${route.method} ${oddUrl} ${body} -> ${res.status} ${res.text.slice(0, 300)}`;
      expect(res.status, context).toBeLessThan(500);
      if (res.status >= 400) expectEnvelope(res, context);
    }
    expect(({} as Record<string, unknown>).role).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(await tenantFingerprint(principals.tenant.id)).toEqual(before);
  });

  it('refuses NUL characters and lone surrogates in bodies, query strings and paths with 400 invalid_characters', async () => {
    const tenant = await createTenant(api);
    const cases = [
      send(server.url, 'POST', '/v1/tenants', { body: { name: 'Acme\u0000', email: `a-${unique()}@example.com`, password: PASSWORD } }),
      send(server.url, 'POST', '/v1/tenants', { body: `{"name":"Acme \\ud800","email":"b-${unique()}@example.com","password":"${PASSWORD}"}` }),
      send(server.url, 'POST', `/v1/${tenant.slug}/auth/login`, { body: { email: 'a@b.co', password: 'p\u0000' } }),
      send(server.url, 'GET', `/v1/${tenant.slug}/me?x=%00`, { token: tenant.accessToken }),
      send(server.url, 'GET', `/v1/${tenant.slug}%00/me`, { token: tenant.accessToken }),
    ];
    for (const res of await Promise.all(cases)) {
      expect(res.status, res.text).toBe(400);
      expectEnvelope(res, res.text);
      expect(res.json.details.reason).toBe('invalid_characters');
    }
  });

  it('answers broken percent-encoding in the path or query with 400', async () => {
    const tenant = await createTenant(api);
    for (const url of [`/v1/${tenant.slug}/me/%E0%A4%A`, `/v1/${tenant.slug}/me?x=%zz`, '/v1/%/me', `/v1/${tenant.slug}/me?x=%ED%A0%80`]) {
      const res = await send(server.url, 'GET', url, { token: tenant.accessToken });
      expect(res.status, `${url}: ${res.text}`).toBe(400);
      expectEnvelope(res, url);
    }
  });

  it('keeps unicode that is valid: emoji, combining marks and bidi text are stored and returned intact', async () => {
    const name = `Ünïcødé 💥 e\u0301 \u202eevil ${unique()}`;
    const res = await send(server.url, 'POST', '/v1/tenants', { body: { name, email: `u-${unique()}@example.com`, password: PASSWORD } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.tenant.name).toBe(name);
  });

  it.each(EDGE_STRINGS.map((s) => [JSON.stringify(s).slice(0, 40), s] as const))('edge string %s as every login field: no 5xx', async (_n, value) => {
    const tenant = await createTenant(api);
    const res = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/login`, { body: { email: value, password: value, totpCode: value } });
    expect(res.status).toBeLessThan(500);
    expectEnvelope(res, res.text);
  });
});

describe('nothing half-written when an operation fails after validation', () => {
  it('a tenant creation refused for a taken slug leaves no user, session or audit row behind', async () => {
    const name = `Half ${unique()}`;
    await createTenant(api, name);
    const email = `half-${unique()}@example.com`;
    const res = await send(server.url, 'POST', '/v1/tenants', { body: { name: name.toUpperCase(), email, password: PASSWORD } });
    expect(res.status).toBe(409);
    const em = server.services.orm.em.fork();
    const [users] = (await em.execute('select count(*)::int as n from app_user where email = ?', [email])) as { n: number }[];
    expect(users!.n).toBe(0);
    const [audits] = (await em.execute(`select count(*)::int as n from audit_event where details::text like ?`, [`%${email}%`])) as { n: number }[];
    expect(audits!.n).toBe(0);
  });

  it('a signup refused for a taken email writes nothing', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const before = await tenantFingerprint(tenant.id);
    const res = await send(server.url, 'POST', `/v1/${tenant.slug}/auth/signup`, { body: { email: member.email.toUpperCase(), password: PASSWORD } });
    expect(res.status).toBe(409);
    expectEnvelope(res, res.text);
    expect(await tenantFingerprint(tenant.id)).toEqual(before);
  });
});
