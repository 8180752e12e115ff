import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpSecretAad } from '../../src/services/mfa/totp-service.js';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { setMfaPolicy } from '../helpers/tenant-settings.js';
import { Authenticator } from '../helpers/totp.js';

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
});
afterAll(async () => {
  await server.close();
});

interface UserTotpRow {
  totp_secret_enc: string | null;
  totp_pending_secret_enc: string | null;
  totp_enrolled_at: Date | null;
}

async function totpRow(userId: string): Promise<UserTotpRow> {
  const [row] = (await server.services.orm.em
    .fork()
    .execute('select totp_secret_enc, totp_pending_secret_enc, totp_enrolled_at from app_user where id = ?', [userId])) as UserTotpRow[];
  return row!;
}

async function auditActions(tenantId: string, userId: string): Promise<string[]> {
  const rows = (await server.services.orm.em
    .fork()
    .execute('select action from audit_event where tenant_id = ? and target_id = ? order by created_at', [tenantId, userId])) as { action: string }[];
  return rows.map((r) => r.action);
}

/** An API key of the tenant (a live key: removing a user's factor needs one, docs/security.md "Test keys"). */
async function createApiKey(tenant: TestTenant, environment: 'live' | 'test' = 'live'): Promise<string> {
  const res = await api.post(`/v1/${tenant.slug}/api-keys`, { name: 'totp test', environment }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.plaintext as string;
}

/** A tenant with a signed-up Member who enrolled TOTP through the initial steps. */
async function enrolledMember(tenant?: TestTenant) {
  const t = tenant ?? (await createTenant(api));
  const member = await signupMember(api, t.slug);
  const enroll = await api.post(`/v1/${t.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD });
  expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
  const authenticator = new Authenticator(enroll.body.secret);
  const verify = await api.post(`/v1/${t.slug}/auth/totp/initial-verify`, {
    email: member.email, password: PASSWORD, code: await authenticator.nextCode(),
  });
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return { tenant: t, member, authenticator, session: verify.body };
}

describe('auth/totp/initial-enroll and initial-verify', () => {
  it('hands out a secret with an otpauth URI, keeps it only encrypted, and activates it with a code', async () => {
    const tenant = await createTenant(api, `Totp Corp ${unique()}`);
    const member = await signupMember(api, tenant.slug);

    const enroll = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    expect(Object.keys(enroll.body).sort()).toEqual(['otpauthUri', 'secret']);
    const secret: string = enroll.body.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(enroll.body.otpauthUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/${(await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken })).body.tenant.name}:${member.email}`);
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toMatch(/^Totp Corp /);
    expect(uri.searchParams.get('algorithm')).toBe('SHA1');
    expect(uri.searchParams.get('digits')).toBe('6');
    expect(uri.searchParams.get('period')).toBe('30');

    // The raw row holds a versioned ciphertext, never the secret.
    let row = await totpRow(member.id);
    expect(row.totp_secret_enc).toBeNull();
    expect(row.totp_pending_secret_enc).toMatch(/^v1:/);
    expect(row.totp_pending_secret_enc).not.toContain(secret);
    expect(server.services.keyring.decrypt(row.totp_pending_secret_enc!, totpSecretAad(member.id))).toBe(secret);

    const authenticator = new Authenticator(secret);
    const verify = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
      email: member.email, password: PASSWORD, code: await authenticator.nextCode(),
    });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expect(verify.body.user).toMatchObject({ id: member.id, email: member.email, role: 'Member' });
    expect(verify.body.accessTokenExpiresIn).toBe(900);

    row = await totpRow(member.id);
    expect(row.totp_pending_secret_enc).toBeNull();
    expect(row.totp_enrolled_at).not.toBeNull();
    expect(row.totp_secret_enc).toMatch(/^v1:/);
    expect(row.totp_secret_enc).not.toContain(secret);
    expect(server.services.keyring.decrypt(row.totp_secret_enc!, totpSecretAad(member.id))).toBe(secret);
    // Not even a base64 or lower-case rendering of the secret is stored.
    expect(row.totp_secret_enc!.toLowerCase()).not.toContain(secret.toLowerCase());
    expect(server.logs.some((line) => line.includes(secret))).toBe(false);

    const me = await api.get(`/v1/${tenant.slug}/me`, { token: verify.body.accessToken });
    expect(me.body.totpEnrolled).toBe(true);
    expect(await auditActions(tenant.id, member.id)).toEqual(expect.arrayContaining(['MfaTotpEnrolled', 'UserLogin']));

    // A second enrollment is a conflict.
    const again = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD });
    expectError(again, 409, 'CONFLICT', 'totp_already_enrolled');
  });

  it('accepts the code under the alias totpCode', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const enroll = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD });
    const authenticator = new Authenticator(enroll.body.secret);
    const verify = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
      email: member.email, password: PASSWORD, totpCode: await authenticator.nextCode(),
    });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expect(typeof verify.body.refreshToken).toBe('string');
  });

  it.each([
    ['neither code nor totpCode', {}],
    ['both code and totpCode', { code: '123456', totpCode: '123456' }],
    ['a 5-digit code', { code: '12345' }],
    ['a code with letters', { totpCode: '12a456' }],
  ])('answers 400 for %s', async (_label, codes) => {
    const tenant = await createTenant(api);
    const res = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, { email: tenant.adminEmail, password: PASSWORD, ...codes });
    expectError(res, 400, 'BAD_REQUEST');
  });

  it('refuses a wrong code, a wrong password and a verification without enrollment', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const notStarted = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, { email: member.email, password: PASSWORD, code: '123456' });
    expectError(notStarted, 409, 'CONFLICT', 'totp_enrollment_not_started');

    const enroll = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD });
    const authenticator = new Authenticator(enroll.body.secret);
    const wrongCode = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
      email: member.email, password: PASSWORD, code: authenticator.wrongCode(),
    });
    expectError(wrongCode, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    const wrongPassword = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
      email: member.email, password: 'not the password', code: await authenticator.nextCode(),
    });
    expectError(wrongPassword, 401, 'UNAUTHORIZED', 'invalid_credentials');
    const wrongEnrollPassword = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: 'nope' });
    expectError(wrongEnrollPassword, 401, 'UNAUTHORIZED', 'invalid_credentials');
    expect((await totpRow(member.id)).totp_secret_enc).toBeNull();
  });

  it('answers 403 while the tenant policy is Disabled', async () => {
    const tenant = await createTenant(api);
    await setMfaPolicy(server, tenant.slug, 'Disabled');
    const res = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: tenant.adminEmail, password: PASSWORD });
    expectError(res, 403, 'FORBIDDEN', 'mfa_disabled');
    const signedIn = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: tenant.accessToken });
    expectError(signedIn, 403, 'FORBIDDEN', 'mfa_disabled');
  });

  it('answers 404 for an unknown tenant before looking at the body', async () => {
    const res = await api.post(`/v1/no-such-${unique()}/auth/totp/initial-enroll`, {});
    expectError(res, 404, 'NOT_FOUND');
  });
});

describe('mfa/totp/enroll and mfa/totp/verify (signed in)', () => {
  it('enrolls the signed-in user and shows totpEnrolled on GET /me', async () => {
    const tenant = await createTenant(api);
    const before = await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken });
    expect(before.body.totpEnrolled).toBe(false);

    const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: tenant.accessToken });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    expect(enroll.body.otpauthUri).toContain(`secret=${enroll.body.secret}`);
    const authenticator = new Authenticator(enroll.body.secret);

    const wrong = await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: authenticator.wrongCode() }, { token: tenant.accessToken });
    expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken })).body.totpEnrolled).toBe(false);

    const verify = await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: await authenticator.nextCode() }, { token: tenant.accessToken });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expect(verify.body).toEqual({ ok: true, recoveryCodes: expect.any(Array) });
    expect(verify.body.recoveryCodes).toHaveLength(10);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken })).body.totpEnrolled).toBe(true);
    expect(await auditActions(tenant.id, tenant.adminId)).toContain('MfaTotpEnrolled');

    const again = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: tenant.accessToken });
    expectError(again, 409, 'CONFLICT', 'totp_already_enrolled');
  });

  it('needs a bearer token and a 6-digit code', async () => {
    const tenant = await createTenant(api);
    expectError(await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`), 401, 'UNAUTHORIZED');
    expectError(await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: '123456' }), 401, 'UNAUTHORIZED');
    expectError(await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: '1234567' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: '123456' }, { token: tenant.accessToken }), 409, 'CONFLICT');
  });
});

describe('users/{userId}/totp/disable', () => {
  it('lets an admin remove a member factor, audited, after which the password alone signs in', async () => {
    const { tenant, member } = await enrolledMember();
    const blocked = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expectError(blocked, 401, 'UNAUTHORIZED', 'mfa_required');

    const res = await api.post(`/v1/${tenant.slug}/users/${member.id}/totp/disable`, undefined, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const row = await totpRow(member.id);
    expect(row).toEqual({ totp_secret_enc: null, totp_pending_secret_enc: null, totp_enrolled_at: null });
    expect(await auditActions(tenant.id, member.id)).toContain('MfaTotpDisabled');

    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const me = await api.get(`/v1/${tenant.slug}/me`, { token: login.body.accessToken });
    expect(me.body.totpEnrolled).toBe(false);

    // Idempotent.
    const twice = await api.post(`/v1/${tenant.slug}/users/${member.id}/totp/disable`, undefined, { token: tenant.accessToken });
    expect(twice.status).toBe(200);
  });

  it('is for admins of the same tenant only', async () => {
    const { tenant, member, session } = await enrolledMember();
    const other = await createTenant(api);
    const byMember = await api.post(`/v1/${tenant.slug}/users/${member.id}/totp/disable`, undefined, { token: session.accessToken });
    expectError(byMember, 403, 'FORBIDDEN');
    const anonymous = await api.post(`/v1/${tenant.slug}/users/${member.id}/totp/disable`);
    expectError(anonymous, 401, 'UNAUTHORIZED');
    const otherTenant = await api.post(`/v1/${other.slug}/users/${member.id}/totp/disable`, undefined, { token: other.accessToken });
    expectError(otherTenant, 404, 'NOT_FOUND');
    const notUuid = await api.post(`/v1/${tenant.slug}/users/not-a-uuid/totp/disable`, undefined, { token: tenant.accessToken });
    expectError(notUuid, 404, 'NOT_FOUND');
    expect((await totpRow(member.id)).totp_enrolled_at).not.toBeNull();
  });

  it('is open to a live API key of the tenant, audited with the key as actor', async () => {
    const { tenant, member } = await enrolledMember();
    const apiKey = await createApiKey(tenant);
    const res = await api.post(`/v1/${tenant.slug}/users/${member.id}/totp/disable`, undefined, { token: apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await totpRow(member.id)).totp_enrolled_at).toBeNull();
    const [event] = (await server.services.orm.em
      .fork()
      .execute(`select actor_type from audit_event where tenant_id = ? and action = 'MfaTotpDisabled'`, [tenant.id])) as { actor_type: string }[];
    expect(event!.actor_type).toBe('api_key');
  });
});

describe('mfa/* with an API key', () => {
  it('answers 401 user_token_required', async () => {
    const tenant = await createTenant(api);
    const apiKey = await createApiKey(tenant);
    expectError(await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: apiKey }), 401, 'UNAUTHORIZED', 'user_token_required');
    // The second use of the key also passes authentication (last_used_at is read back from the row).
    expectError(await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: '123456' }, { token: apiKey }), 401, 'UNAUTHORIZED', 'user_token_required');
  });
});
