import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { expect } from 'vitest';
import { appRouter } from '../../src/routers/index.js';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_ISSUER } from '../../src/security/access-token.js';
import { randomBase62, sha256Hex } from '../../src/security/tokens.js';
import { type Api, createTenant, PASSWORD, signupMember, type TestTenant } from './api.js';
import { TEST_JWT_SECRET, type TestServer } from './server.js';

/** The claims of a service access token (docs/api-rules.md "Credentials and sessions"). */
export interface AccessClaims {
  sub: string;
  tid: string;
  sid: string;
  role: string;
}

/** Reads the claims of an access token without verifying it (the test issued or received it). */
export function claimsOf(accessToken: string): AccessClaims {
  return jwt.decode(accessToken) as AccessClaims;
}

/**
 * Signs a token with the test `JWT_SECRET` (HS256); `overrides` replace or remove (`undefined`)
 * registered claims, so tests can build expired, not-yet-valid or wrongly addressed tokens.
 */
export function signWithTestSecret(claims: Partial<AccessClaims>, overrides: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = { ...claims, iat: now, exp: now + 900, iss: ACCESS_TOKEN_ISSUER, aud: ACCESS_TOKEN_AUDIENCE, ...overrides };
  for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
  return jwt.sign(payload, TEST_JWT_SECRET, { algorithm: 'HS256', noTimestamp: true });
}

/**
 * An API key of `tenant`: created through `POST api-keys` when that route is in the router, otherwise
 * written directly the way the service stores keys (SHA-256 hash and visible prefix).
 */
export async function issueApiKey(api: Api, server: TestServer, tenant: TestTenant): Promise<{ plaintext: string; id: string }> {
  if ('apiKeys.create' in appRouter._def.procedures) {
    const res = await api.post(`/v1/${tenant.slug}/api-keys`, { name: 'matrix', environment: 'test' }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { plaintext: res.body.plaintext as string, id: res.body.apiKey.id as string };
  }
  const plaintext = `ak_test_${randomBase62(40)}`;
  const id = randomUUID();
  await server.services.orm.em.fork().execute(
    `insert into api_key (id, tenant_id, name, environment, prefix, key_hash, created_at, created_by)
     values (?, ?, 'matrix', 'test', ?, ?, now(), ?)`,
    [id, tenant.id, plaintext.slice(0, 12), sha256Hex(plaintext), tenant.adminId],
  );
  return { plaintext, id };
}

/** Every kind of caller the authorization matrix tries, for one fresh tenant. */
export interface Principals {
  tenant: TestTenant;
  memberToken: string;
  memberId: string;
  adminToken: string;
  apiKey: string;
  /** An access token of a session of the tenant's admin that was ended by `auth/logout`. */
  revokedToken: string;
  /** A correctly signed access token of a live admin session, with `exp` in the past. */
  expiredToken: string;
}

/** Creates a tenant with a Member, an Admin, an API key, an ended session and an expired token. */
export async function createPrincipals(api: Api, server: TestServer): Promise<Principals> {
  const tenant = await createTenant(api);
  const member = await signupMember(api, tenant.slug);
  const apiKey = await issueApiKey(api, server, tenant);
  const second = await api.post(`/v1/${tenant.slug}/auth/login`, { email: tenant.adminEmail, password: PASSWORD });
  expect(second.status, JSON.stringify(second.body)).toBe(200);
  const logout = await api.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: second.body.refreshToken });
  expect(logout.status).toBe(200);
  const now = Math.floor(Date.now() / 1000);
  const expiredToken = signWithTestSecret(claimsOf(tenant.accessToken), { iat: now - 2000, exp: now - 1000 });
  return {
    tenant,
    memberToken: member.accessToken,
    memberId: member.id,
    adminToken: tenant.accessToken,
    apiKey: apiKey.plaintext,
    revokedToken: second.body.accessToken as string,
    expiredToken,
  };
}

/** A response as the security suites see it: status, headers, raw text and parsed JSON (if any). */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/**
 * One HTTP request without following redirects (the IdP start route answers 302 to the provider).
 * `body` is sent as given when a string, JSON-encoded otherwise.
 */
export async function send(baseUrl: string, method: string, url: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  const res = await fetch(baseUrl + url, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Asserts a response is exactly the error envelope `{code, message, details}` (docs/api-rules.md). */
export function expectEnvelope(res: RawResponse, context: string): void {
  expect(res.json, `${context}: not JSON: ${res.text.slice(0, 200)}`).toBeTypeOf('object');
  expect(Object.keys(res.json as object).sort(), `${context}: ${res.text.slice(0, 300)}`).toEqual(['code', 'details', 'message']);
  expect(typeof res.json.code, context).toBe('string');
  expect(typeof res.json.message, context).toBe('string');
  expect(res.json.details, context).toBeTypeOf('object');
  expect(res.json.details, context).not.toBeNull();
  expect(res.text, `${context}: leaks a stack trace`).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
}
