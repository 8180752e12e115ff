import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTenant(suite.api);
});

const login = (email: string, password = PASSWORD) => suite.api.post(`/v1/${tenant.slug}/auth/login`, { email, password });

describe('GET /me', () => {
  it('returns every field of the User object', async () => {
    const res = await suite.api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: tenant.adminId,
      tenantId: tenant.id,
      email: tenant.adminEmail,
      status: 'Active',
      role: 'Admin',
      totpEnrolled: false,
      tenant: { slug: tenant.slug },
    });
    expect(typeof res.body.tenant.name).toBe('string');
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    expect(new Date(res.body.lastLoginAt).toISOString()).toBe(res.body.lastLoginAt);
  });

  it('updates lastLoginAt on sign-in', async () => {
    const member = await signupMember(suite.api, tenant.slug);
    const before = (await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).body.lastLoginAt as string;
    await new Promise((r) => setTimeout(r, 20));
    const session = await login(member.email);
    const after = (await suite.api.get(`/v1/${tenant.slug}/me`, { token: session.body.accessToken })).body.lastLoginAt as string;
    expect(new Date(after).getTime()).toBeGreaterThan(new Date(before).getTime());
  });

  it('answers 401 without or with a broken bearer token', async () => {
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`), 401, 'UNAUTHORIZED', 'missing_credential');
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`, { headers: { authorization: 'Basic abc' } }), 401, 'UNAUTHORIZED', 'missing_credential');
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`, { token: 'a.b.c' }), 401, 'UNAUTHORIZED', 'invalid_token');
  });

  it('answers 404 for an unknown tenant', async () => {
    expectError(await suite.api.get('/v1/unknown-tenant-zzz/me', { token: tenant.accessToken }), 404, 'NOT_FOUND');
  });
});

describe('PATCH /me/password', () => {
  it('changes the password, ends the other sessions and keeps the calling one', async () => {
    const member = await signupMember(suite.api, tenant.slug);
    const other = (await login(member.email)).body;
    const newPassword = 'a brand new passphrase';
    const res = await suite.api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword }, { token: member.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`, { token: other.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await login(member.email), 401, 'UNAUTHORIZED', 'invalid_credentials');
    expect((await login(member.email, newPassword)).status).toBe(200);
    const audit = await suite.server.services.orm.em.fork().execute<{ n: string }[]>(
      `select count(*) as n from audit_event where tenant_id = ? and action = 'UserPasswordChanged' and target_id = ?`,
      [tenant.id, member.id],
    );
    expect(Number(audit[0]!.n)).toBe(1);
  });

  it('answers 401 for a wrong current password and keeps the old one', async () => {
    const member = await signupMember(suite.api, tenant.slug);
    const res = await suite.api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: 'not it', newPassword: 'another long password' }, { token: member.accessToken });
    expectError(res, 401, 'UNAUTHORIZED', 'invalid_credentials');
    expect((await login(member.email)).status).toBe(200);
  });

  it.each([
    ['new password of 11', { currentPassword: PASSWORD, newPassword: 'x'.repeat(11) }],
    ['new password of 1025', { currentPassword: PASSWORD, newPassword: 'x'.repeat(1025) }],
    ['empty current password', { currentPassword: '', newPassword: 'x'.repeat(12) }],
    ['current password of 1025', { currentPassword: 'x'.repeat(1025), newPassword: 'x'.repeat(12) }],
  ])('answers 400 for %s', async (_l, body) => {
    expectError(await suite.api.patch(`/v1/${tenant.slug}/me/password`, body, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });

  it('needs a bearer token', async () => {
    expectError(await suite.api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword: 'x'.repeat(12) }), 401, 'UNAUTHORIZED');
  });
});

describe('DELETE /me', () => {
  it('soft-deletes the user: sessions end, login fails, the email can sign up again', async () => {
    const member = await signupMember(suite.api, tenant.slug);
    const second = (await login(member.email)).body;
    const res = await suite.api.delete(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`, { token: second.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: second.refreshToken }), 401, 'UNAUTHORIZED');
    expectError(await login(member.email), 401, 'UNAUTHORIZED', 'invalid_credentials');
    const rows = await suite.server.services.orm.em.fork().execute<{ deleted_at: Date | null }[]>('select deleted_at from app_user where id = ?', [member.id]);
    expect(rows[0]!.deleted_at).not.toBeNull();
    const audit = await suite.server.services.orm.em.fork().execute<{ n: string }[]>(
      `select count(*) as n from audit_event where tenant_id = ? and action = 'UserSoftDeleted' and target_id = ?`,
      [tenant.id, member.id],
    );
    expect(Number(audit[0]!.n)).toBe(1);
    expect((await suite.api.post(`/v1/${tenant.slug}/auth/signup`, { email: member.email, password: PASSWORD })).status).toBe(200);
  });

  it('refuses to delete the last active admin with 409 last_admin', async () => {
    const t = await createTenant(suite.api);
    expectError(await suite.api.delete(`/v1/${t.slug}/me`, { token: t.accessToken }), 409, 'CONFLICT', 'last_admin');
    expect((await suite.api.get(`/v1/${t.slug}/me`, { token: t.accessToken })).status).toBe(200);
  });

  it('needs a bearer token', async () => {
    expectError(await suite.api.delete(`/v1/${tenant.slug}/me`), 401, 'UNAUTHORIZED');
  });
});
