import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer({ smtp: true });

async function audit(tenant: TestTenant, query = '') {
  const res = await suite.api.get(`/v1/${tenant.slug}/audit${query}`, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items as Record<string, any>[];
}

describe('the admin story: invite, accept, sign in, API key created and revoked, all read back from the audit log', () => {
  it('works end to end', async () => {
    const tenant = await createTenant(suite.api);
    const colleague = `colleague-${unique()}@example.com`;

    const invited = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: colleague }, { token: tenant.accessToken });
    expect(invited.status).toBe(200);
    const mail = await suite.sink.waitFor(colleague);
    const token = new URL(/https?:\/\/\S+/.exec(mail.text)![0]).searchParams.get('token')!;
    const accepted = await suite.api.post('/v1/invites/accept', { token, password: PASSWORD });
    expect(accepted.status).toBe(200);
    expect(accepted.body.tenantSlug).toBe(tenant.slug);
    const login = await suite.api.post(`/v1/${accepted.body.tenantSlug}/auth/login`, { email: colleague, password: PASSWORD });
    expect(login.status).toBe(200);
    const userId = login.body.user.id as string;

    const created = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'deploy bot', environment: 'live' }, { token: tenant.accessToken });
    const key = created.body.plaintext as string;
    expect((await suite.api.get(`/v1/${tenant.slug}/users`, { token: key })).status).toBe(200);
    expect((await suite.api.delete(`/v1/${tenant.slug}/api-keys/${created.body.apiKey.id}`, { token: tenant.accessToken })).status).toBe(200);
    expectError(await suite.api.get(`/v1/${tenant.slug}/users`, { token: key }), 401, 'UNAUTHORIZED', 'api_key_revoked');

    const inviteId = invited.body.invite.id;
    const keyId = created.body.apiKey.id;
    const expectations: [string, Record<string, unknown>][] = [
      ['InviteCreated', { actorType: 'user', actorId: tenant.adminId, targetType: 'invite', targetId: inviteId }],
      ['InviteAccepted', { actorType: 'user', actorId: userId, targetType: 'invite', targetId: inviteId }],
      ['UserSignup', { actorId: userId, targetType: 'user', targetId: userId }],
      ['UserLogin', { actorId: userId, targetId: userId }],
      ['ApiKeyCreated', { actorId: tenant.adminId, targetType: 'api_key', targetId: keyId }],
      ['ApiKeyRevoked', { actorId: tenant.adminId, targetType: 'api_key', targetId: keyId }],
    ];
    for (const [action, fields] of expectations) {
      const items = await audit(tenant, `?action=${action}`);
      expect(items.length, action).toBeGreaterThanOrEqual(1);
      expect(items.every((i) => i.action === action)).toBe(true);
      expect(items[0], action).toMatchObject({ action, ...fields });
    }
    // Two sign-ins of the colleague (acceptance, login) each started a session.
    const sessions = (await audit(tenant, '?action=SessionCreated')).filter((e) => e.actorId === userId);
    expect(sessions).toHaveLength(2);
  });
});

describe('GET /v1/{tenantSlug}/audit', () => {
  it('returns items newest first with every field of the audit item, only of the own tenant', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    await signupMember(suite.api, tenant.slug);
    const items = await audit(tenant);
    expect(items.map((i) => i.action)).toEqual(['SessionCreated', 'UserSignup', 'SessionCreated', 'UserSignup', 'TenantCreated']);
    expect(Object.keys(items[0]!).sort()).toEqual(
      ['action', 'actorId', 'actorType', 'createdAt', 'details', 'id', 'ip', 'targetId', 'targetType', 'userAgent'].sort(),
    );
    const times = items.map((i) => Date.parse(i.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(items[0]!.ip).toEqual(expect.any(String));
    expect(items.some((i) => i.targetId === other.adminId)).toBe(false);
  });

  it('pages with limit and an exclusive before', async () => {
    const tenant = await createTenant(suite.api);
    for (let i = 0; i < 3; i++) await signupMember(suite.api, tenant.slug);
    const all = await audit(tenant, '?limit=200');
    expect(all).toHaveLength(9);
    expect(await audit(tenant)).toHaveLength(9);
    const first = await audit(tenant, '?limit=4');
    expect(first.map((i) => i.id)).toEqual(all.slice(0, 4).map((i) => i.id));
    const before = first[3]!.createdAt as string;
    const next = await audit(tenant, `?limit=4&before=${encodeURIComponent(before)}`);
    expect(next.every((i) => Date.parse(i.createdAt) < Date.parse(before))).toBe(true);
    expect(next.map((i) => i.id)).toEqual(all.filter((i) => Date.parse(i.createdAt) < Date.parse(before)).slice(0, 4).map((i) => i.id));
  });

  it('filters by userId as actor or target', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    expect((await suite.api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).status).toBe(200);
    const items = await audit(tenant, `?userId=${member.id}`);
    // The member signed up (actor and target), started a session (actor), and was deleted by the admin
    // (target); an Admin's delete is not the person's request for erasure (no GdprErasureRequested).
    expect(items.map((i) => i.action)).toEqual(['UserSoftDeleted', 'SessionCreated', 'UserSignup']);
    expect(items[0]).toMatchObject({ actorId: tenant.adminId, targetId: member.id });
    const adminItems = await audit(tenant, `?userId=${tenant.adminId}&action=SessionRevoked`);
    expect(adminItems).toHaveLength(1);
    expect(await audit(tenant, `?userId=${member.id}&limit=1`)).toHaveLength(1);
  });

  it('searches action, email and details text case-insensitively, with LIKE wildcards taken literally', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug, `Search_Me-${unique()}@Example.com`);
    await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });

    const byEmail = await audit(tenant, `?search=${encodeURIComponent(member.email.toUpperCase())}`);
    // UserSignup carries the email in details; UserLogin and SessionCreated name the member as actor.
    expect(byEmail.map((i) => i.action).sort()).toEqual(['SessionCreated', 'SessionCreated', 'UserLogin', 'UserSignup']);
    expect((await audit(tenant, '?search=usersign')).map((i) => i.action)).toEqual(['UserSignup', 'UserSignup']);
    expect(await audit(tenant, `?search=${encodeURIComponent('%')}`)).toEqual([]);
    expect((await audit(tenant, '?search=h_me')).length).toBe(4);
    expect(await audit(tenant, '?search=sea_ch')).toEqual([]);
    expect(await audit(tenant, `?search=${encodeURIComponent('_me-')}`)).toHaveLength(4);
    expect((await audit(tenant, '?search=tenant_creation&action=UserSignup')).map((i) => i.targetId)).toEqual([tenant.adminId]);
    // A page filled from the newest events alone (first pass) equals the head of the full match list (second pass).
    const full = await audit(tenant, '?search=session');
    expect(full.length).toBeGreaterThan(2);
    expect((await audit(tenant, '?search=session&limit=2')).map((i) => i.id)).toEqual(full.slice(0, 2).map((i) => i.id));
    expect((await audit(tenant, `?search=h_me&userId=${member.id}&action=UserLogin`)).map((i) => i.action)).toEqual(['UserLogin']);
  });

  it.each([
    ['unknown action', '?action=Nope'],
    ['userId not a uuid', '?userId=abc'],
    ['before not a date-time', '?before=yesterday'],
    ['limit 0', '?limit=0'],
    ['limit 201', '?limit=201'],
    ['limit not an integer', '?limit=1.5'],
    ['search over 200', `?search=${'s'.repeat(201)}`],
    // The REST adapter drops empty query values; an empty search must not mean "no filter".
    ['search empty', '?search='],
    ['search empty beside another filter', '?limit=5&search='],
  ])('answers 400 for %s', async (_label, query) => {
    const tenant = await createTenant(suite.api);
    expectError(await suite.api.get(`/v1/${tenant.slug}/audit${query}`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });
});
