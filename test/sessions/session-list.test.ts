import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { claimsOf, issueApiKey } from '../helpers/principals.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
});

interface SessionItem {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  ip: string | null;
  userAgent: string | null;
  method: string | null;
  current: boolean;
}

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

async function login(tenant: TestTenant, email: string, userAgent = 'session-list-test/1.0') {
  const res = await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD }, { headers: { 'user-agent': userAgent } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { accessToken: res.body.accessToken as string, refreshToken: res.body.refreshToken as string, sid: claimsOf(res.body.accessToken).sid };
}

async function mySessions(tenant: TestTenant, token: string): Promise<SessionItem[]> {
  const res = await api.get(`/v1/${tenant.slug}/me/sessions`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items as SessionItem[];
}

describe('GET me/sessions', () => {
  it('lists the live sessions of the user only, marks the current one, and shows how each was authenticated', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const phone = await login(tenant, member.email, 'Phone/1.0');
    const laptop = await login(tenant, member.email, 'Laptop/2.0');
    const ended = await login(tenant, member.email);
    expect((await api.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: ended.refreshToken })).status).toBe(200);

    const items = await mySessions(tenant, laptop.accessToken);
    expect(items.map((s) => s.id).sort()).toEqual([claimsOf(member.accessToken).sid, phone.sid, laptop.sid].sort());
    const byId = new Map(items.map((s) => [s.id, s]));
    expect(byId.get(laptop.sid)).toMatchObject({ current: true, userAgent: 'Laptop/2.0', method: 'password', ip: expect.any(String) });
    expect(byId.get(phone.sid)).toMatchObject({ current: false, userAgent: 'Phone/1.0', method: 'password' });
    expect(items.filter((s) => s.current)).toHaveLength(1);
    // Newest first; never refreshed: lastUsedAt is the start.
    expect(items[0]!.id).toBe(laptop.sid);
    expect(byId.get(phone.sid)!.lastUsedAt).toBe(byId.get(phone.sid)!.createdAt);
    // The admin's sessions are not in the member's list, and the current flag follows the token.
    expect(items.some((s) => s.id === claimsOf(tenant.accessToken).sid)).toBe(false);
    expect((await mySessions(tenant, phone.accessToken)).find((s) => s.current)!.id).toBe(phone.sid);
    // The personal-data export carries the method too.
    const exported = await api.get(`/v1/${tenant.slug}/me/export`, { token: laptop.accessToken });
    expect((exported.body.sessions as { id: string; method: string | null }[]).find((s) => s.id === laptop.sid)?.method).toBe('password');

    // A refresh moves lastUsedAt; reading does not.
    const refreshed = await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: phone.refreshToken });
    expect(refreshed.status).toBe(200);
    const after = (await mySessions(tenant, laptop.accessToken)).find((s) => s.id === phone.sid)!;
    expect(Date.parse(after.lastUsedAt)).toBeGreaterThanOrEqual(Date.parse(after.createdAt));
    // lastUsedAt is the creation of the session's newest successor token (a refresh writes no session row)
    const [row] = await sql<{ created_at: Date }>(
      'select created_at from refresh_token where session_id = ? and parent_id is not null order by created_at desc limit 1', [phone.sid],
    );
    expect(new Date(row!.created_at).toISOString()).toBe(after.lastUsedAt);
    expect(Date.parse(after.lastUsedAt)).toBeGreaterThan(Date.parse(after.createdAt));
  });

  it('refuses an API key with user_token_required, and no token with 401', async () => {
    const tenant = await createTenant(api);
    const apiKey = await issueApiKey(api, server, tenant);
    expectError(await api.get(`/v1/${tenant.slug}/me/sessions`, { token: apiKey.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await api.delete(`/v1/${tenant.slug}/me/sessions/${claimsOf(tenant.accessToken).sid}`, { token: apiKey.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await api.get(`/v1/${tenant.slug}/me/sessions`), 401, 'UNAUTHORIZED');
  });
});

describe('DELETE me/sessions/{sessionId}', () => {
  it('ends the session at once: its access token gets session_revoked and its refresh token stops working; audited', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const stolen = await login(tenant, member.email);
    // The stolen token works until the owner ends its session.
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: stolen.accessToken })).status).toBe(200);

    const res = await api.delete(`/v1/${tenant.slug}/me/sessions/${stolen.sid}`, { token: member.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: stolen.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: stolen.refreshToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expect((await mySessions(tenant, member.accessToken)).map((s) => s.id)).toEqual([claimsOf(member.accessToken).sid]);
    // Ending it again: it is no longer a live session.
    expectError(await api.delete(`/v1/${tenant.slug}/me/sessions/${stolen.sid}`, { token: member.accessToken }), 404, 'NOT_FOUND', 'not_found');

    const [audit] = await sql<{ actor_id: string; details: Record<string, unknown> }>(
      `select actor_id, details from audit_event where tenant_id = ? and action = 'SessionRevoked' and target_id = ?`, [tenant.id, stolen.sid],
    );
    expect(audit!.actor_id).toBe(member.id);
    expect(audit!.details).toEqual({ reason: 'session_revoked_by_user', userId: member.id });
    const [session] = await sql<{ revoked_reason: string }>('select revoked_reason from session where id = ?', [stolen.sid]);
    expect(session!.revoked_reason).toBe('session_revoked_by_user');
  });

  it('ends the current session like logout', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const sid = claimsOf(member.accessToken).sid;
    expect((await api.delete(`/v1/${tenant.slug}/me/sessions/${sid}`, { token: member.accessToken })).status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/me/sessions`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
  });

  it("answers 404 for another user's or another tenant's session, which keeps working", async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const victim = await signupMember(api, tenant.slug);
    const victimSid = claimsOf(victim.accessToken).sid;
    const elsewhere = await createTenant(api);
    const elsewhereSid = claimsOf(elsewhere.accessToken).sid;

    expectError(await api.delete(`/v1/${tenant.slug}/me/sessions/${victimSid}`, { token: member.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expectError(await api.delete(`/v1/${tenant.slug}/me/sessions/${elsewhereSid}`, { token: member.accessToken }), 404, 'NOT_FOUND', 'not_found');
    // Even an admin cannot use the me route on someone else's session.
    expectError(await api.delete(`/v1/${tenant.slug}/me/sessions/${victimSid}`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    // Unknown ids look the same as foreign ones; a non-UUID is a validation error.
    expectError(await api.delete(`/v1/${tenant.slug}/me/sessions/00000000-0000-4000-8000-000000000000`, { token: member.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expectError(await api.delete(`/v1/${tenant.slug}/me/sessions/not-a-uuid`, { token: member.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');

    expect((await api.get(`/v1/${tenant.slug}/me`, { token: victim.accessToken })).status).toBe(200);
    expect((await api.get(`/v1/${elsewhere.slug}/me`, { token: elsewhere.accessToken })).status).toBe(200);
    const [row] = await sql<{ n: number }>('select count(*)::int as n from session where id in (?, ?) and revoked_at is not null', [victimSid, elsewhereSid]);
    expect(row!.n).toBe(0);
  });
});

describe('admin: users/{userId}/sessions', () => {
  it("lets an admin or an API key list and end a user's session; the user's token fails at once", async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const second = await login(tenant, member.email);
    const apiKey = await issueApiKey(api, server, tenant);

    const list = await api.get(`/v1/${tenant.slug}/users/${member.id}/sessions`, { token: tenant.accessToken });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const items = list.body.items as SessionItem[];
    expect(items.map((s) => s.id).sort()).toEqual([claimsOf(member.accessToken).sid, second.sid].sort());
    expect(items.every((s) => s.current === false)).toBe(true);
    const byKey = await api.get(`/v1/${tenant.slug}/users/${member.id}/sessions`, { token: apiKey.plaintext });
    expect(byKey.status).toBe(200);
    expect(byKey.body.items).toHaveLength(2);
    // On the admin's own entry, `current` marks the admin's token.
    const own = await api.get(`/v1/${tenant.slug}/users/${tenant.adminId}/sessions`, { token: tenant.accessToken });
    expect((own.body.items as SessionItem[]).find((s) => s.current)?.id).toBe(claimsOf(tenant.accessToken).sid);

    const ended = await api.delete(`/v1/${tenant.slug}/users/${member.id}/sessions/${second.sid}`, { token: tenant.accessToken });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: second.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    const byKeyEnd = await api.delete(`/v1/${tenant.slug}/users/${member.id}/sessions/${claimsOf(member.accessToken).sid}`, { token: apiKey.plaintext });
    expect(byKeyEnd.status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');

    const audits = await sql<{ actor_type: string; actor_id: string; details: Record<string, unknown> }>(
      `select actor_type, actor_id, details from audit_event where tenant_id = ? and action = 'SessionRevoked' order by created_at`, [tenant.id],
    );
    expect(audits).toEqual([
      { actor_type: 'user', actor_id: tenant.adminId, details: { reason: 'session_revoked_by_admin', userId: member.id } },
      { actor_type: 'api_key', actor_id: apiKey.id, details: { reason: 'session_revoked_by_admin', userId: member.id } },
    ]);
  });

  it("refuses a Member (403), another tenant's admin (404) and a session of another user (404)", async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const other = await signupMember(api, tenant.slug);
    const sid = claimsOf(member.accessToken).sid;
    const otherTenant = await createTenant(api);

    expectError(await api.get(`/v1/${tenant.slug}/users/${member.id}/sessions`, { token: other.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expectError(await api.delete(`/v1/${tenant.slug}/users/${member.id}/sessions/${sid}`, { token: other.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    // Another tenant's admin, on its own tenant's path: the user is not found there.
    expectError(await api.get(`/v1/${otherTenant.slug}/users/${member.id}/sessions`, { token: otherTenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expectError(await api.delete(`/v1/${otherTenant.slug}/users/${member.id}/sessions/${sid}`, { token: otherTenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    // Another tenant's admin token on this tenant's path.
    expectError(await api.get(`/v1/${tenant.slug}/users/${member.id}/sessions`, { token: otherTenant.accessToken }), 401, 'UNAUTHORIZED', 'tenant_mismatch');
    // A session id paired with the wrong user.
    expectError(await api.delete(`/v1/${tenant.slug}/users/${other.id}/sessions/${sid}`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    // An unknown or deleted user.
    expectError(await api.get(`/v1/${tenant.slug}/users/00000000-0000-4000-8000-000000000000/sessions`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expect((await api.delete(`/v1/${tenant.slug}/users/${other.id}`, { token: tenant.accessToken })).status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/users/${other.id}/sessions`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');

    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await api.get('/v1/openapi.json');
    expect(doc.body.paths['/v1/{tenantSlug}/me/sessions']?.get).toBeDefined();
    expect(doc.body.paths['/v1/{tenantSlug}/me/sessions/{sessionId}']?.delete).toBeDefined();
    expect(doc.body.paths['/v1/{tenantSlug}/users/{userId}/sessions']?.get).toBeDefined();
    expect(doc.body.paths['/v1/{tenantSlug}/users/{userId}/sessions/{sessionId}']?.delete).toBeDefined();
  });
});
