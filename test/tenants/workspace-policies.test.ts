import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isCommonPassword } from '../../src/security/common-passwords.js';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { tokenFromMail } from '../helpers/email-verification.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

// The workspace's policies (docs/api-rules.md "Workspace policies"): passwords, lockout, session
// lifetime, on GET/PATCH tenant; and an admin creating a user (POST users).

const COMMON = 'qwerty123456'; // on the bundled list, 12 characters
let server: TestServer;
let sink: SmtpSink;
let api: Api;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ SMTP_URL: sink.url });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

function db(): EntityManager {
  return server.services.orm.em.fork() as EntityManager;
}

async function patchTenant(tenant: TestTenant, body: Record<string, unknown>, token = tenant.accessToken): Promise<ApiResponse> {
  return api.patch(`/v1/${tenant.slug}/tenant`, body, { token });
}

async function auditOf(tenant: TestTenant, action: string): Promise<Record<string, any>[]> {
  return (await api.get(`/v1/${tenant.slug}/audit?action=${action}`, { token: tenant.accessToken })).body.items;
}

describe('the bundled common-password list', () => {
  it('knows common passwords of 12 characters or more, without regard to case, and not a passphrase', () => {
    expect(isCommonPassword(COMMON)).toBe(true);
    expect(isCommonPassword('QWERTY123456')).toBe(true);
    expect(isCommonPassword('1q2w3e4r5t6y')).toBe(true);
    expect(isCommonPassword(PASSWORD)).toBe(false);
  });
});

describe('GET/PATCH tenant: the policies', () => {
  it('shows the defaults, changes them in part, audits TenantUpdated with each changed field, and validates the ranges', async () => {
    const tenant = await createTenant(api);
    const before = await api.get(`/v1/${tenant.slug}/tenant`, { token: tenant.accessToken });
    expect(before.body).toMatchObject({
      passwordPolicy: { minLength: 12, rejectCommon: true },
      lockout: { maxFailedAttempts: 10, windowSeconds: 900 },
      sessionPolicy: { refreshTokenLifetimeSeconds: 2_592_000 },
    });
    const res = await patchTenant(tenant, { passwordPolicy: { minLength: 16 }, lockout: { maxFailedAttempts: 5 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      passwordPolicy: { minLength: 16, rejectCommon: true },
      lockout: { maxFailedAttempts: 5, windowSeconds: 900 },
      sessionPolicy: { refreshTokenLifetimeSeconds: 2_592_000 },
    });
    const event = (await auditOf(tenant, 'TenantUpdated'))[0]!;
    expect(event.details.changes).toEqual({ 'passwordPolicy.minLength': { from: 12, to: 16 }, 'lockout.maxFailedAttempts': { from: 10, to: 5 } });
    for (const body of [
      { passwordPolicy: { minLength: 11 } }, { passwordPolicy: { minLength: 129 } }, { passwordPolicy: { rejectCommon: 'false' } },
      { lockout: { maxFailedAttempts: 2 } }, { lockout: { maxFailedAttempts: 101 } }, { lockout: { windowSeconds: 59 } },
      { sessionPolicy: { refreshTokenLifetimeSeconds: 3599 } }, { sessionPolicy: { refreshTokenLifetimeSeconds: 2_592_001 } },
    ]) {
      expectError(await patchTenant(tenant, body), 400, 'BAD_REQUEST', 'validation_failed');
    }
  });

  it('is a security change: a Member gets 403 admin_required, an ak_test_ key 403 live_key_required', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    expectError(await patchTenant(tenant, { lockout: { maxFailedAttempts: 100 } }, member.accessToken), 403, 'FORBIDDEN', 'admin_required');
    const key = await api.post(`/v1/${tenant.slug}/api-keys`, { name: 'ci', environment: 'test' }, { token: tenant.accessToken });
    expectError(await patchTenant(tenant, { lockout: { maxFailedAttempts: 100 } }, key.body.plaintext), 403, 'FORBIDDEN', 'live_key_required');
    expectError(await patchTenant(tenant, { passwordPolicy: { rejectCommon: false } }, key.body.plaintext), 403, 'FORBIDDEN', 'live_key_required');
  });
});

describe('sign-in-options: what the hosted pages need to follow the settings', () => {
  it('gives the sign-up policy, the allowed domains only under Domains, and the minimum password length', async () => {
    const tenant = await createTenant(api);
    const options = async () => (await api.get(`/v1/${tenant.slug}/sign-in-options`)).body;
    expect(await options()).toMatchObject({ signupPolicy: 'Open', signupEmailDomains: [], passwordMinLength: 12 });
    expect((await patchTenant(tenant, { signupPolicy: 'Domains', signupEmailDomains: ['acme.test', 'Example.COM'], passwordPolicy: { minLength: 14 } })).status).toBe(200);
    expect(await options()).toMatchObject({ signupPolicy: 'Domains', signupEmailDomains: ['acme.test', 'example.com'], passwordMinLength: 14 });
    expect((await patchTenant(tenant, { signupPolicy: 'InviteOnly' })).status).toBe(200);
    expect(await options()).toMatchObject({ signupPolicy: 'InviteOnly', signupEmailDomains: [] });
    expectError(await api.get(`/v1/no-such-${unique()}/sign-in-options`), 404, 'NOT_FOUND', 'tenant_not_found');
  });
});

describe('passwordPolicy: refused with its reason wherever a password is set', () => {
  it('sign-up: too short for the workspace (details.minLength), or common; a common one passes once rejectCommon is off', async () => {
    const tenant = await createTenant(api);
    const signup = (password: string) => api.post(`/v1/${tenant.slug}/auth/signup`, { email: `m-${unique()}@example.com`, password });
    const short = await signup('short');
    expectError(short, 400, 'BAD_REQUEST', 'password_too_short');
    expect(short.body.details.minLength).toBe(12);
    expectError(await signup(COMMON), 400, 'BAD_REQUEST', 'password_too_common');
    expect((await patchTenant(tenant, { passwordPolicy: { minLength: 30 } })).status).toBe(200);
    const longer = await signup(PASSWORD); // 28 characters
    expectError(longer, 400, 'BAD_REQUEST', 'password_too_short');
    expect(longer.body.details.minLength).toBe(30);
    expect((await patchTenant(tenant, { passwordPolicy: { minLength: 12, rejectCommon: false } })).status).toBe(200);
    expect((await signup(COMMON)).status).toBe(200);
  });

  it('workspace creation, password change, reset and invite acceptance refuse a common password', async () => {
    expectError(await api.post('/v1/tenants', { name: `W ${unique()}`, email: `a-${unique()}@example.com`, password: COMMON }), 400, 'BAD_REQUEST', 'password_too_common');
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    expectError(
      await api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword: COMMON }, { token: member.accessToken }),
      400, 'BAD_REQUEST', 'password_too_common',
    );
    expectError(
      await api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword: 'too short' }, { token: member.accessToken }),
      400, 'BAD_REQUEST', 'password_too_short',
    );
    expect((await api.post(`/v1/${tenant.slug}/users/${member.id}/password-reset`, undefined, { token: tenant.accessToken })).status).toBe(200);
    const token = tokenFromMail((await sink.waitFor(member.email, (m) => m.subject.startsWith('Reset your password'))).text);
    expectError(await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: COMMON }), 400, 'BAD_REQUEST', 'password_too_common');
    // the refusal does not spend the link
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: 'a brand new passphrase 42' })).status).toBe(200);
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: `i-${unique()}@example.com` }, { token: tenant.accessToken });
    expectError(await api.post('/v1/invites/accept', { token: invite.body.token, password: COMMON }), 400, 'BAD_REQUEST', 'password_too_common');
    expect((await api.post('/v1/invites/accept', { token: invite.body.token, password: PASSWORD })).status).toBe(200);
  });
});

describe('sessionPolicy: the refresh-token lifetime', () => {
  it('new sessions and each refresh get the workspace\'s lifetime, and the token expires then', async () => {
    const tenant = await createTenant(api);
    expect((await patchTenant(tenant, { sessionPolicy: { refreshTokenLifetimeSeconds: 3600 } })).status).toBe(200);
    const member = await signupMember(api, tenant.slug);
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(login.body.refreshTokenExpiresIn).toBe(3600);
    const refreshed = await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: login.body.refreshToken });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.refreshTokenExpiresIn).toBe(3600);
    const tokenHash = createHash('sha256').update(refreshed.body.refreshToken).digest('hex');
    const rows = (await db().execute(
      'select extract(epoch from (expires_at - now()))::int as left from refresh_token where token_hash = ? and rotated_at is null',
      [tokenHash],
    )) as { left: number }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.left).toBeGreaterThan(3500);
    expect(rows[0]!.left).toBeLessThanOrEqual(3600);
    // an hour later (moved back in the database) the refresh token no longer works
    await db().execute(`update refresh_token set expires_at = now() - interval '1 second' where token_hash = ?`, [tokenHash]);
    expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: refreshed.body.refreshToken }), 401, 'UNAUTHORIZED', 'refresh_token_expired');
  });
});

describe('POST users: an admin creates a user', () => {
  it('with a password: Active, signs in at once; audited UserCreated; 409 for an address present', async () => {
    const tenant = await createTenant(api);
    const email = `New-${unique()}@Example.com`;
    const res = await api.post(`/v1/${tenant.slug}/users`, { email, password: PASSWORD, role: 'Admin', emailVerified: true }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.user).toMatchObject({ email: email.toLowerCase(), role: 'Admin', status: 'Active' });
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD })).status).toBe(200);
    const event = (await auditOf(tenant, 'UserCreated'))[0]!;
    expect(event).toMatchObject({ actorId: tenant.adminId, targetId: res.body.user.id, details: { email: email.toLowerCase(), role: 'Admin', emailVerified: true, passwordSet: true } });
    expectError(await api.post(`/v1/${tenant.slug}/users`, { email }, { token: tenant.accessToken }), 409, 'CONFLICT', 'email_taken');
    expectError(await api.post(`/v1/${tenant.slug}/users`, { email: tenant.adminEmail }, { token: tenant.accessToken }), 409, 'CONFLICT', 'email_taken');
  });

  it('without a password: mailed a link to set one, then signs in with it (a Member by default)', async () => {
    const tenant = await createTenant(api);
    const email = `invitee-${unique()}@example.com`;
    const res = await api.post(`/v1/${tenant.slug}/users`, { email }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.user).toMatchObject({ role: 'Member', status: 'Active' });
    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');
    const token = tokenFromMail((await sink.waitFor(email)).text);
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: PASSWORD })).status).toBe(200);
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD })).status).toBe(200);
    const event = (await auditOf(tenant, 'UserCreated'))[0]!;
    expect(event.details).toMatchObject({ passwordSet: false, emailVerified: false });
  });

  it('refuses a weak password with its reason, a Member (403), an ak_test_ key (403 live_key_required)', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const create = (body: Record<string, unknown>, token: string) => api.post(`/v1/${tenant.slug}/users`, body, { token });
    expectError(await create({ email: `x-${unique()}@example.com`, password: COMMON }, tenant.accessToken), 400, 'BAD_REQUEST', 'password_too_common');
    expectError(await create({ email: `x-${unique()}@example.com`, password: 'short' }, tenant.accessToken), 400, 'BAD_REQUEST', 'password_too_short');
    expectError(await create({ email: `x-${unique()}@example.com` }, member.accessToken), 403, 'FORBIDDEN', 'admin_required');
    const test = await api.post(`/v1/${tenant.slug}/api-keys`, { name: 'ci', environment: 'test' }, { token: tenant.accessToken });
    expectError(await create({ email: `x-${unique()}@example.com` }, test.body.plaintext), 403, 'FORBIDDEN', 'live_key_required');
    const live = await api.post(`/v1/${tenant.slug}/api-keys`, { name: 'backend', environment: 'live' }, { token: tenant.accessToken });
    expect((await create({ email: `x-${unique()}@example.com`, password: PASSWORD }, live.body.plaintext)).status).toBe(200);
  });
});

describe('lockout (RATE_LIMIT_SCALE 1)', () => {
  let limited: TestServer;
  let limitedApi: Api;
  beforeAll(async () => {
    limited = await startTestServer({
      RATE_LIMIT_SCALE: '1', TRUST_PROXY: 'true', ...(inject('embeddedDatabase') ? { DATABASE_POOL_MAX: '1' } : {}),
    });
    limitedApi = new Api(limited.url);
  });
  afterAll(async () => {
    await limited?.close();
  });

  const from = { headers: { 'x-forwarded-for': '203.0.113.77' } };
  const login = (slug: string, email: string, password: string) => limitedApi.post(`/v1/${slug}/auth/login`, { email, password }, from);

  it('after maxFailedAttempts login answers 429 with Retry-After until an Admin unlocks (audited UserUnlocked)', async () => {
    const tenant = await createTenant(api);
    expect((await patchTenant(tenant, { lockout: { maxFailedAttempts: 3, windowSeconds: 600 } })).status).toBe(200);
    const member = await signupMember(api, tenant.slug);
    for (let i = 0; i < 3; i += 1) expectError(await login(tenant.slug, member.email, 'wrong password'), 401, 'UNAUTHORIZED', 'invalid_credentials');
    const locked = await login(tenant.slug, member.email, PASSWORD);
    expectError(locked, 429, 'TOO_MANY_REQUESTS', 'rate_limited');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(500);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // the unlock is an Admin's (or a live key's) call; a Member gets 403
    const other = await signupMember(api, tenant.slug);
    expectError(await limitedApi.post(`/v1/${tenant.slug}/users/${member.id}/unlock`, undefined, { token: other.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    const unlock = await limitedApi.post(`/v1/${tenant.slug}/users/${member.id}/unlock`, undefined, { token: tenant.accessToken });
    expect(unlock.status, JSON.stringify(unlock.body)).toBe(200);
    expect(unlock.body).toEqual({ ok: true });
    expect((await login(tenant.slug, member.email, PASSWORD)).status).toBe(200);
    const event = (await auditOf(tenant, 'UserUnlocked'))[0]!;
    expect(event).toMatchObject({ actorId: tenant.adminId, targetId: member.id, details: { email: member.email } });
    // a fresh count after the unlock: three more failures lock again
    for (let i = 0; i < 3; i += 1) expect((await login(tenant.slug, member.email, 'wrong password')).status).toBe(401);
    expectError(await login(tenant.slug, member.email, PASSWORD), 429, 'TOO_MANY_REQUESTS', 'rate_limited');
    expectError(await limitedApi.post(`/v1/${tenant.slug}/users/00000000-0000-4000-8000-000000000000/unlock`, undefined, { token: tenant.accessToken }), 404, 'NOT_FOUND');
  });

  it('the default policy: 10 failures', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    for (let i = 0; i < 10; i += 1) expect((await login(tenant.slug, member.email, 'wrong password')).status).toBe(401);
    expectError(await login(tenant.slug, member.email, PASSWORD), 429, 'TOO_MANY_REQUESTS', 'rate_limited');
  });
});
