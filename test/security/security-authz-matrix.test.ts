import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, type TestTenant } from '../helpers/api.js';
import { createPrincipals, expectEnvelope, type Principals, type RawResponse, send } from '../helpers/principals.js';
import { ACCESS_CLASSES, type AccessClass, inputJsonSchema, listProcedureNames, listRoutes, type RouteInfo, toRequest, TRPC_ONLY_PROCEDURES } from '../helpers/routes.js';
import { sampleValue } from '../helpers/schema-arbitrary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The authorization matrix (OWASP ASVS V8): every route of `appRouter` × every kind of caller, with
 * the status docs/api-rules.md expects. Generated from the router, so a route merged later is covered
 * without editing this file, and an unclassified route fails.
 */

let server: TestServer;
let api: Api;
let foreign: TestTenant;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
  foreign = await createTenant(api);
});
afterAll(async () => {
  await server.close();
});

/** `details.reason` values that mean "this caller may not do this" rather than a business outcome. */
const DENIAL_REASONS = new Set([
  'missing_credential', 'invalid_token', 'token_expired', 'session_revoked', 'tenant_mismatch', 'user_token_required',
  'api_key_revoked', 'api_key_expired', 'user_suspended', 'admin_required',
]);

/** Reasons only a bearer-credential check gives; a public route never answers with them. */
const CREDENTIAL_ONLY_REASONS = new Set(['missing_credential', 'token_expired', 'session_revoked', 'tenant_mismatch', 'user_token_required', 'admin_required']);

type Caller = 'none' | 'adminOfAnotherTenant' | 'revokedSession' | 'expiredToken' | 'apiKey' | 'member' | 'admin';

/** Callers in the order they are tried: refusals first, then those that may change state, Admin last. */
const CALLERS: Caller[] = ['none', 'adminOfAnotherTenant', 'revokedSession', 'expiredToken', 'member', 'apiKey', 'admin'];

function tokenOf(caller: Caller, p: Principals): string | undefined {
  switch (caller) {
    case 'none':
      return undefined;
    case 'adminOfAnotherTenant':
      return foreign.accessToken;
    case 'revokedSession':
      return p.revokedToken;
    case 'expiredToken':
      return p.expiredToken;
    case 'apiKey':
      return p.apiKey;
    case 'member':
      return p.memberToken;
    case 'admin':
      return p.adminToken;
  }
}

/** What the matrix expects: a refusal with status and reason, or admission. */
type Expectation = { refused: 401 | 403; reason: string } | 'admitted';

/** The expected outcome of a cell (docs/api-rules.md "Credentials and sessions"). */
function expectation(access: AccessClass, caller: Caller): Expectation {
  if (access === 'public') return 'admitted';
  switch (caller) {
    case 'none':
      return { refused: 401, reason: 'missing_credential' };
    case 'adminOfAnotherTenant':
      return { refused: 401, reason: 'tenant_mismatch' };
    case 'revokedSession':
      return { refused: 401, reason: 'session_revoked' };
    case 'expiredToken':
      return { refused: 401, reason: 'token_expired' };
    case 'apiKey':
      // the matrix's key is an ak_test_ key
      if (access === 'securityAdmin') return { refused: 403, reason: 'live_key_required' };
      if (access === 'adminSession') return { refused: 403, reason: 'admin_session_required' };
      return access === 'user' || access === 'adminUser' ? { refused: 401, reason: 'user_token_required' } : 'admitted';
    case 'member':
      return access === 'admin' || access === 'securityAdmin' || access === 'adminUser' || access === 'adminSession' ? { refused: 403, reason: 'admin_required' } : 'admitted';
    case 'admin':
      return 'admitted';
  }
}

/** A plausible input for the route: the required fields from its schema, the fixture tenant's slug. */
function sampleInput(route: RouteInfo, p: Principals): Record<string, unknown> {
  const input = sampleValue(inputJsonSchema(route)) as Record<string, unknown>;
  if (route.pathParams.includes('tenantSlug')) input.tenantSlug = p.tenant.slug;
  if (route.pathParams.includes('userId')) input.userId = p.memberId;
  return input;
}

function describeCell(route: RouteInfo, caller: Caller, res: RawResponse): string {
  return `${route.method} ${route.path} as ${caller}: ${res.status} ${res.text.slice(0, 300)}`;
}

const routes = listRoutes();

describe('authorization matrix', () => {
  it('classifies every procedure of the router (a new route cannot escape the matrix)', () => {
    const unclassified = listProcedureNames().filter((name) => !(name in ACCESS_CLASSES));
    expect(unclassified, 'add these procedures to ACCESS_CLASSES in test/helpers/routes.ts').toEqual([]);
  });

  it('exposes every procedure over REST, so the matrix reaches it (except the declared /trpc-only ones)', () => {
    expect(routes.map((r) => r.procedure)).toEqual(listProcedureNames().filter((name) => !TRPC_ONLY_PROCEDURES.has(name)));
  });

  it('marks exactly the public routes `protect: false` in the API description', () => {
    const mismatched = routes.filter((r) => (ACCESS_CLASSES[r.procedure] === 'public') === r.protect).map((r) => r.procedure);
    expect(mismatched).toEqual([]);
  });

  it('carries no credential in a URL: no password, token, secret or key in any path or query parameter', () => {
    // OWASP ASVS 14.2.1. The IdP callback's `code`/`state` are OAuth's own front-channel parameters.
    // The one exception is the mailed email-verification link (GET auth/verify-email?token=…): a link
    // in a mail must carry its single-use, 24-hour token, as every verification mail does; it proves
    // only control of the mailbox and is spent on first use (docs/decisions.md "Account lifecycle").
    const allowed = new Set(['auth.verifyEmailLink.token']);
    const credentialName = /password|token|secret|apikey|plaintext|otp/i;
    const offending = routes.flatMap((r) =>
      Object.keys(inputJsonSchema(r).properties ?? {})
        .filter((field) => !r.usesBody || r.pathParams.includes(field))
        .filter((field) => credentialName.test(field))
        .map((field) => `${r.procedure}.${field}`),
    );
    expect(offending.filter((f) => !allowed.has(f))).toEqual([]);
    expect(offending).toEqual([...allowed]);
  });

  it.each(routes.map((r) => [`${r.procedure} (${r.method} ${r.path})`, r] as const))('%s', async (_name, route) => {
    const access = ACCESS_CLASSES[route.procedure];
    expect(access, `${route.procedure} is not in ACCESS_CLASSES`).toBeDefined();
    // A fresh tenant per route: calls that end sessions or delete users cannot disturb other rows.
    const principals = await createPrincipals(api, server);
    let anonymous: { status: number; reason: unknown } | undefined;
    for (const caller of CALLERS) {
      const { url, body } = toRequest(route, sampleInput(route, principals));
      const res = await send(server.url, route.method, url, { token: tokenOf(caller, principals), body });
      const context = describeCell(route, caller, res);
      expect(res.status, context).toBeLessThan(500);
      if (res.status >= 400) expectEnvelope(res, context);
      const expected = expectation(access!, caller);
      const outcome = { status: res.status, reason: res.json?.details?.reason };
      if (access === 'public') {
        // Public routes ignore credentials: every caller gets what the anonymous caller got.
        anonymous ??= outcome;
        expect(outcome, `credential changed the outcome: ${context}`).toEqual(anonymous);
        expect(CREDENTIAL_ONLY_REASONS.has(outcome.reason as string), context).toBe(false);
      } else if (expected === 'admitted') {
        const denied = (res.status === 401 || res.status === 403) && DENIAL_REASONS.has(res.json?.details?.reason);
        expect(denied, `expected admission: ${context}`).toBe(false);
        expect(res.json?.details?.reason, context).not.toBe('tenant_not_found');
      } else {
        expect(res.status, context).toBe(expected.refused);
        expect(res.json.code, context).toBe(expected.refused === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN');
        expect(res.json.details.reason, context).toBe(expected.reason);
      }
    }
  });

  it('refuses the same callers on the typed /trpc endpoint (no second pathway)', async () => {
    const p = await createPrincipals(api, server);
    const refusals: [Caller, string | undefined][] = [
      ['none', undefined], ['adminOfAnotherTenant', foreign.accessToken], ['revokedSession', p.revokedToken], ['expiredToken', p.expiredToken],
    ];
    for (const route of routes.filter((r) => ACCESS_CLASSES[r.procedure] !== 'public')) {
      const input = JSON.stringify(sampleInput(route, p));
      const call = (token: string | undefined) =>
        route.type === 'query'
          ? send(server.url, 'GET', `/trpc/${route.procedure}?input=${encodeURIComponent(input)}`, { token })
          : send(server.url, 'POST', `/trpc/${route.procedure}`, { token, body: input });
      const cases: [Caller, string | undefined, number][] = refusals.map(([caller, token]) => [caller, token, 401]);
      const access = ACCESS_CLASSES[route.procedure];
      if (access === 'admin' || access === 'securityAdmin' || access === 'adminUser' || access === 'adminSession') cases.push(['member', p.memberToken, 403]);
      if (access === 'user' || access === 'adminUser') cases.push(['apiKey', p.apiKey, 401]);
      if (access === 'securityAdmin') cases.push(['apiKey', p.apiKey, 403]);
      for (const [caller, token, status] of cases) {
        const res = await call(token);
        expect(res.status, `/trpc/${route.procedure} as ${caller}: ${res.text.slice(0, 300)}`).toBe(status);
      }
    }
  });
});
