import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { assertConformsToOpenApi } from './openapi-conformance.js';

/** One HTTP exchange as a test sees it. */
export interface ApiResponse<T = Record<string, any>> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  headers?: Record<string, string>;
  /** Sent as-is instead of JSON-encoding `body`. */
  raw?: string;
}

/** A small JSON client for the REST API of one test server. */
export class Api {
  constructor(readonly baseUrl: string) {}

  async request<T = Record<string, any>>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let payload: string | undefined = opts.raw;
    if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the text
    }
    assertConformsToOpenApi(method, path, res.status, res.headers.get('content-type'), parsed);
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T = Record<string, any>>(path: string, opts?: RequestOptions) {
    return this.request<T>('GET', path, undefined, opts);
  }
  post<T = Record<string, any>>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('POST', path, body, opts);
  }
  put<T = Record<string, any>>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('PUT', path, body, opts);
  }
  patch<T = Record<string, any>>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('PATCH', path, body, opts);
  }
  delete<T = Record<string, any>>(path: string, opts?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, opts);
  }
}

/** A unique lower-case suffix so tests never collide on slugs or emails. */
export function unique(): string {
  return randomBytes(5).toString('hex');
}

export const PASSWORD = 'correct horse battery staple';

/** A tenant created through the API with its first admin signed in. */
export interface TestTenant {
  slug: string;
  id: string;
  adminEmail: string;
  adminId: string;
  accessToken: string;
  refreshToken: string;
}

/** Creates a tenant with a unique name through POST /v1/tenants. */
export async function createTenant(api: Api, name = `Tenant ${unique()}`): Promise<TestTenant> {
  const adminEmail = `admin-${unique()}@example.com`;
  const res = await api.post('/v1/tenants', { tenant: { name }, admin: { email: adminEmail, password: PASSWORD } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return {
    slug: res.body.tenantSlug,
    id: res.body.tenant.id,
    adminEmail,
    adminId: res.body.user.id,
    accessToken: res.body.accessToken,
    refreshToken: res.body.refreshToken,
  };
}

/** Signs a new Member up in a tenant; returns the session body and the email used. */
export async function signupMember(api: Api, slug: string, email = `member-${unique()}@example.com`) {
  const res = await api.post(`/v1/${slug}/auth/signup`, { email, password: PASSWORD });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { email, id: res.body.user.id as string, accessToken: res.body.accessToken as string, refreshToken: res.body.refreshToken as string };
}

/** Asserts the error envelope of docs/api-rules.md with a status, code and optional `details.reason`. */
export function expectError(res: ApiResponse, status: number, code: string, reason?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'message']);
  expect(res.body.code).toBe(code);
  expect(typeof res.body.message).toBe('string');
  expect(typeof res.body.details).toBe('object');
  if (reason !== undefined) expect(res.body.details.reason).toBe(reason);
}
