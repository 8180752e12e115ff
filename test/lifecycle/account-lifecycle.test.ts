import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique } from '../helpers/api.js';
import { setRequireEmailVerification, tokenFromMail } from '../helpers/email-verification.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const PUBLIC_URL = 'https://id.example.test';
const NEW_PASSWORD = 'a brand new passphrase 42';

let server: TestServer;
let sink: SmtpSink;
let api: Api;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ SMTP_URL: sink.url, PUBLIC_URL });
  api = new Api(server.url);
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

function db(): EntityManager {
  return server.services.orm.em.fork() as EntityManager;
}

async function auditActions(tenantId: string, userId: string): Promise<{ action: string; details: Record<string, unknown> }[]> {
  return (await db().execute(
    `select action, details from audit_event where tenant_id = ? and target_id = ? order by created_at, id`,
    [tenantId, userId],
  )) as { action: string; details: Record<string, unknown> }[];
}

const isVerification = (m: { subject: string }) => m.subject.startsWith('Confirm your email address');

/** Asks for a verification mail through the API and returns its token. */
async function requestVerification(slug: string, email: string): Promise<string> {
  const res = await api.post(`/v1/${slug}/auth/request-email-verification`, { email });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return tokenFromMail((await sink.waitFor(email, isVerification)).text);
}
const isReset = (m: { subject: string }) => m.subject.startsWith('Reset your password');

describe('email verification', () => {
  it('mails a PUBLIC_URL link on request where the tenant does not require verification; opening it verifies once (UserEmailVerified)', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const issued = (await db().execute('select count(*)::int as n from account_token where user_id = ?', [member.id])) as { n: number }[];
    expect(issued[0]!.n).toBe(0); // no mail at signup: the tenant did not ask for verification
    expect((await api.post(`/v1/${tenant.slug}/auth/request-email-verification`, { email: member.email })).status).toBe(200);
    const mail = await sink.waitFor(member.email, isVerification);
    const link = /https:\/\/id\.example\.test\/app\/[^\s"<]+/.exec(mail.text)?.[0];
    // the hosted verify-email page calls the GET verify-email route with the link's token
    const restLink = `/v1/${tenant.slug}/auth/verify-email${new URL(link ?? PUBLIC_URL).search}`;
    expect(link).toBeDefined();
    expect(link).toContain(`/app/${tenant.slug}/verify-email?token=`);
    expect(mail.html).toContain(`${PUBLIC_URL}/app/${tenant.slug}/verify-email?token=`);

    let me = await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    expect(me.body).toMatchObject({ status: 'Active', emailVerified: false });

    const opened = await api.get(restLink);
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body).toEqual({ ok: true });
    me = await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    expect(me.body).toMatchObject({ status: 'Active', emailVerified: true });

    expectError(await api.get(restLink), 401, 'UNAUTHORIZED', 'invalid_token');
    const actions = (await auditActions(tenant.id, member.id)).map((a) => a.action);
    expect(actions.filter((a) => a === 'UserEmailVerified')).toHaveLength(1);
  });

  it('keeps a user Pending where the tenant requires verification: tokens refused until verified, then the signup session works', async () => {
    const tenant = await createTenant(api);
    await setRequireEmailVerification(server, tenant.slug, true);
    const email = `pending-${unique()}@example.com`;
    const signup = await api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: PASSWORD });
    expect(signup.status).toBe(200);
    expect(signup.body.user.status).toBe('Pending');
    const { accessToken, refreshToken } = signup.body;

    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: accessToken }), 401, 'UNAUTHORIZED', 'email_not_verified');
    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'email_not_verified');
    expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken }), 401, 'UNAUTHORIZED', 'email_not_verified');

    const token = tokenFromMail((await sink.waitFor(email, isVerification)).text);
    const verified = await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);

    const me = await api.get(`/v1/${tenant.slug}/me`, { token: accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ status: 'Active', emailVerified: true });
    // The refresh token was not rotated by the refused attempt.
    expect((await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken })).status).toBe(200);
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD })).status).toBe(200);
  });

  it('request-email-verification answers the same for unknown emails and replaces the earlier token', async () => {
    const tenant = await createTenant(api);
    await setRequireEmailVerification(server, tenant.slug, true);
    const email = `again-${unique()}@example.com`;
    await api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: PASSWORD });
    const first = tokenFromMail((await sink.waitFor(email, isVerification)).text);

    const unknown = await api.post(`/v1/${tenant.slug}/auth/request-email-verification`, { email: `nobody-${unique()}@example.com` });
    const known = await api.post(`/v1/${tenant.slug}/auth/request-email-verification`, { email: email.toUpperCase() });
    expect(unknown.status).toBe(200);
    expect(known.status).toBe(200);
    expect(unknown.body).toEqual(known.body);

    const second = tokenFromMail((await sink.waitFor(email, (m) => isVerification(m) && !m.text.includes(first))).text);
    expect(second).not.toBe(first);
    expectError(await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token: first }), 401, 'UNAUTHORIZED', 'invalid_token');
    expect((await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token: second })).status).toBe(200);
  });

  it('refuses an expired token, a token of another tenant and a malformed body', async () => {
    const tenant = await createTenant(api);
    const other = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const token = await requestVerification(tenant.slug, member.email);
    expectError(await api.post(`/v1/${other.slug}/auth/verify-email`, { token }), 401, 'UNAUTHORIZED', 'invalid_token');
    await db().execute(`update account_token set expires_at = ? where user_id = ?`, [new Date(Date.now() - 1000), member.id]);
    expectError(await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token }), 401, 'UNAUTHORIZED', 'token_expired');
    expectError(await api.post(`/v1/${tenant.slug}/auth/verify-email`, {}), 400, 'BAD_REQUEST');
    expectError(await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token: '' }), 400, 'BAD_REQUEST');
    expectError(await api.post(`/v1/no-such-${unique()}/auth/verify-email`, { token }), 404, 'NOT_FOUND');
  });

  it('stores only the SHA-256 hash of a mailed token', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const token = await requestVerification(tenant.slug, member.email);
    const rows = (await db().execute('select token_hash from account_token where user_id = ?', [member.id])) as { token_hash: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]!.token_hash).not.toContain(token);
    expect(server.logs.some((line) => line.includes(token))).toBe(false);
  });
});

describe('password reset', () => {
  it('mails a single-use token; completing it sets the password and ends every session', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const req = await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email });
    expect(req.status).toBe(200);
    expect(req.body).toEqual({ ok: true });
    const mail = await sink.waitFor(member.email, isReset);
    expect(mail.text).toContain(`${PUBLIC_URL}/app/${tenant.slug}/reset-password?token=`);
    const token = tokenFromMail(mail.text);

    const done = await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: NEW_PASSWORD });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toEqual({ ok: true, sessionsEnded: 1 });

    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken }), 401, 'UNAUTHORIZED');
    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: NEW_PASSWORD })).status).toBe(200);

    expectError(
      await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: `${NEW_PASSWORD}!` }),
      401, 'UNAUTHORIZED', 'invalid_token',
    );
    const changed = (await auditActions(tenant.id, member.id)).filter((a) => a.action === 'UserPasswordChanged');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.details).toMatchObject({ via: 'password_reset', sessionsEnded: 1 });
    expect(JSON.stringify(changed[0]!.details)).not.toContain(NEW_PASSWORD);
  });

  it('answers the same whether the account exists, and mails nothing for an unknown email', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const ghost = `ghost-${unique()}@example.com`;
    const unknown = await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: ghost });
    const known = await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email });
    expect([unknown.status, unknown.body]).toEqual([known.status, known.body]);
    await sink.waitFor(member.email, isReset);
    const tokens = (await db().execute(
      `select count(*)::int as n from account_token t join tenant on tenant.id = t.tenant_id where tenant.slug = ? and t.purpose = 'password_reset'`,
      [tenant.slug],
    )) as { n: number }[];
    expect(tokens[0]!.n).toBe(1);
    expect(sink.messages.some((m) => m.to.includes(ghost))).toBe(false);
  });

  it('a new request voids the earlier token; an expired token is refused', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email });
    const first = tokenFromMail((await sink.waitFor(member.email, isReset)).text);
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email });
    const second = tokenFromMail((await sink.waitFor(member.email, (m) => isReset(m) && !m.text.includes(first))).text);
    expectError(
      await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token: first, newPassword: NEW_PASSWORD }),
      401, 'UNAUTHORIZED', 'invalid_token',
    );
    await db().execute(`update account_token set expires_at = ? where user_id = ? and purpose = 'password_reset'`, [
      new Date(Date.now() - 1000), member.id,
    ]);
    expectError(
      await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token: second, newPassword: NEW_PASSWORD }),
      401, 'UNAUTHORIZED', 'token_expired',
    );
  });

  it('validates the new password (12 to 1024 characters)', async () => {
    const tenant = await createTenant(api);
    for (const newPassword of ['x'.repeat(11), 'x'.repeat(1025)]) {
      expectError(await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token: 'abc', newPassword }), 400, 'BAD_REQUEST');
    }
    expectError(await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: 'not-an-email' }), 400, 'BAD_REQUEST');
  });

  it('verifies the address of a Pending user who completes a reset', async () => {
    const tenant = await createTenant(api);
    await setRequireEmailVerification(server, tenant.slug, true);
    const email = `reset-pending-${unique()}@example.com`;
    await api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: PASSWORD });
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email });
    const token = tokenFromMail((await sink.waitFor(email, isReset)).text);
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: NEW_PASSWORD })).status).toBe(200);
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: NEW_PASSWORD });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.user.status).toBe('Active');
    const actions = (await auditActions(tenant.id, login.body.user.id)).map((a) => a.action);
    expect(actions).toContain('UserEmailVerified');
  });
});

describe('OpenAPI', () => {
  it('describes every account lifecycle route', async () => {
    const doc = await api.get('/v1/openapi.json');
    const paths = doc.body.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/v1/{tenantSlug}/auth/verify-email']!).sort()).toEqual(['get', 'post']);
    for (const p of ['request-email-verification', 'password-reset/request', 'password-reset/complete']) {
      expect(paths[`/v1/{tenantSlug}/auth/${p}`]?.post, p).toBeDefined();
    }
    expect(paths['/v1/{tenantSlug}/me/export']?.get).toBeDefined();
    expect(paths['/v1/{tenantSlug}/users/{userId}/export']?.get).toBeDefined();
    expect(paths['/v1/{tenantSlug}/tenant']?.delete).toBeDefined();
  });
});
