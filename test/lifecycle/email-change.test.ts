import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { tokenFromMail } from '../helpers/email-verification.js';
import { claimsOf, issueApiKey } from '../helpers/principals.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.js';

const PUBLIC_URL = 'https://id.example.test';

let server: TestServer;
let sink: SmtpSink;
let api: Api;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ SMTP_URL: sink.url, PUBLIC_URL });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

const isConfirmation = (m: ReceivedMail) => m.subject.startsWith('Confirm your new email address');
const isNotice = (m: ReceivedMail) => m.subject.startsWith('Your sign-in email was changed');

/** Asks to move `member` to `newEmail` and returns the token of the confirmation mail sent to the new address. */
async function requestChange(slug: string, accessToken: string, newEmail: string): Promise<string> {
  const res = await api.post(`/v1/${slug}/me/email`, { newEmail, currentPassword: PASSWORD }, { token: accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ ok: true });
  return tokenFromMail((await sink.waitFor(newEmail, isConfirmation)).text);
}

function confirm(slug: string, token: string) {
  return api.post(`/v1/${slug}/auth/email-change/confirm`, { token });
}

async function auditDetails(tenantId: string, userId: string, action: string): Promise<Record<string, unknown>[]> {
  const rows = await sql<{ details: Record<string, unknown> }>(
    'select details from audit_event where tenant_id = ? and target_id = ? and action = ? order by created_at, id',
    [tenantId, userId, action],
  );
  return rows.map((r) => r.details);
}

async function emailOf(tenant: TestTenant, userId: string): Promise<string> {
  return (await sql<{ email: string }>('select email from app_user where id = ? and tenant_id = ?', [userId, tenant.id]))[0]!.email;
}

describe('changing the sign-in email', () => {
  it('mails a link to the new address; confirming switches and verifies it, keeps sessions, and tells the old address', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const newEmail = `new-${unique()}@example.org`;

    const token = await requestChange(tenant.slug, member.accessToken, newEmail);
    const mail = await sink.waitFor(newEmail, isConfirmation);
    expect(mail.text).toContain(`${PUBLIC_URL}/app/${tenant.slug}/confirm-email?token=`);
    expect(mail.text).toContain('24 hours');
    // nothing changes before the link is opened
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).body.email).toBe(member.email);
    expect(await auditDetails(tenant.id, member.id, 'UserEmailChangeRequested')).toEqual([
      expect.objectContaining({ previousEmail: member.email, newEmail }),
    ]);

    const done = await confirm(tenant.slug, token);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toEqual({ ok: true, email: newEmail });

    // the session that asked keeps working and shows the new, verified address
    const me = await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    expect(me.body).toMatchObject({ email: newEmail, emailVerified: true });
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: newEmail, password: PASSWORD })).status).toBe(200);
    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');

    const notice = await sink.waitFor(member.email, isNotice);
    expect(notice.text).toContain(`${newEmail[0]}***@example.org`);
    expect(notice.text).not.toContain(newEmail);
    expect(notice.text).not.toMatch(/token=|https?:\/\//);
    expect(await auditDetails(tenant.id, member.id, 'UserEmailChanged')).toEqual([
      expect.objectContaining({ previousEmail: member.email, newEmail }),
    ]);

    expectError(await confirm(tenant.slug, token), 401, 'UNAUTHORIZED', 'invalid_token');
  });

  it('refuses a token on another workspace, and it still works on its own', async () => {
    const tenant = await createTenant(api);
    const other = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const newEmail = `moved-${unique()}@example.org`;
    const token = await requestChange(tenant.slug, member.accessToken, newEmail);
    expectError(await confirm(other.slug, token), 401, 'UNAUTHORIZED', 'invalid_token');
    expect((await confirm(tenant.slug, token)).status).toBe(200);
    expect(await emailOf(tenant, member.id)).toBe(newEmail);
  });

  it('refuses an address another user has (case-insensitive), and one taken between the request and the link', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const colleague = await signupMember(api, tenant.slug);
    const taken = await api.post(`/v1/${tenant.slug}/me/email`, { newEmail: colleague.email.toUpperCase(), currentPassword: PASSWORD }, { token: member.accessToken });
    expectError(taken, 409, 'CONFLICT', 'email_taken');

    const wanted = `wanted-${unique()}@example.org`;
    const token = await requestChange(tenant.slug, member.accessToken, wanted);
    await signupMember(api, tenant.slug, wanted);
    expectError(await confirm(tenant.slug, token), 409, 'CONFLICT', 'email_taken');
    expect(await emailOf(tenant, member.id)).toBe(member.email);
    expect(await auditDetails(tenant.id, member.id, 'UserEmailChanged')).toEqual([]);

    // the same address stays free in another workspace
    const elsewhere = await createTenant(api);
    const there = await signupMember(api, elsewhere.slug);
    const otherToken = await requestChange(elsewhere.slug, there.accessToken, colleague.email);
    expect((await confirm(elsewhere.slug, otherToken)).status).toBe(200);
  });

  it('needs a recent sign-in: a stale session (a stolen or refreshed token) is refused and nothing is mailed', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    await sql('update session set authenticated_at = ? where id = ?', [new Date(Date.now() - 11 * 60 * 1000), claimsOf(member.accessToken).sid]);
    const newEmail = `stale-${unique()}@example.org`;
    const res = await api.post(`/v1/${tenant.slug}/me/email`, { newEmail, currentPassword: PASSWORD }, { token: member.accessToken });
    expectError(res, 401, 'UNAUTHORIZED', 'reauthentication_required');
    expect(res.body.details.maxAgeSeconds).toBe(600);
    expect(await sql('select id from account_token where user_id = ?', [member.id])).toEqual([]);
    expect(sink.messages.some((m) => m.to.includes(newEmail))).toBe(false);
  });

  it('needs the current password of an account that has one (audited), and refuses API keys', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const newEmail = `pw-${unique()}@example.org`;
    const wrong = await api.post(`/v1/${tenant.slug}/me/email`, { newEmail, currentPassword: 'not the password' }, { token: member.accessToken });
    expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_credentials');
    expectError(await api.post(`/v1/${tenant.slug}/me/email`, { newEmail }, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'invalid_credentials');
    const failed = await auditDetails(tenant.id, member.id, 'UserLoginFailed');
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({ reason: 'invalid_credentials', via: 'email_change' });
    expect(await sql('select id from account_token where user_id = ?', [member.id])).toEqual([]);

    const apiKey = await issueApiKey(api, server, tenant);
    expectError(await api.post(`/v1/${tenant.slug}/me/email`, { newEmail }, { token: apiKey.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await api.post(`/v1/${tenant.slug}/me/email`, { newEmail }), 401, 'UNAUTHORIZED');
  });

  it('lets an account without a password (provider-only) change with its recent sign-in alone', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    await sql('update app_user set password_hash = null where id = ?', [member.id]);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).body.passwordSet).toBe(false);
    const newEmail = `idp-${unique()}@example.org`;
    expect((await api.post(`/v1/${tenant.slug}/me/email`, { newEmail }, { token: member.accessToken })).status).toBe(200);
    const token = tokenFromMail((await sink.waitFor(newEmail, isConfirmation)).text);
    expect((await confirm(tenant.slug, token)).status).toBe(200);
    expect(await emailOf(tenant, member.id)).toBe(newEmail);
  });

  it('ends the reset link mailed to the old address, and only the newest change link works', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email })).status).toBe(200);
    const resetToken = tokenFromMail((await sink.waitFor(member.email, (m) => m.subject.startsWith('Reset your password'))).text);

    const first = await requestChange(tenant.slug, member.accessToken, `first-${unique()}@example.org`);
    const second = await requestChange(tenant.slug, member.accessToken, `second-${unique()}@example.org`);
    expectError(await confirm(tenant.slug, first), 401, 'UNAUTHORIZED', 'invalid_token');
    const done = await confirm(tenant.slug, second);
    expect(done.status).toBe(200);

    const reset = await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token: resetToken, newPassword: 'an attacker chosen passphrase' });
    expectError(reset, 401, 'UNAUTHORIZED', 'invalid_token');
  });

  it('refuses the current address and, under the Domains sign-up policy, another domain', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug, `dom-${unique()}@example.com`);
    const same = await api.post(`/v1/${tenant.slug}/me/email`, { newEmail: member.email.toUpperCase(), currentPassword: PASSWORD }, { token: member.accessToken });
    expectError(same, 400, 'BAD_REQUEST', 'email_unchanged');

    const policy = await api.patch(`/v1/${tenant.slug}/tenant`, { signupPolicy: 'Domains', signupEmailDomains: ['example.com'] }, { token: tenant.accessToken });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const outside = await api.post(`/v1/${tenant.slug}/me/email`, { newEmail: `x-${unique()}@example.org`, currentPassword: PASSWORD }, { token: member.accessToken });
    expectError(outside, 403, 'FORBIDDEN', 'signup_domain_not_allowed');
    const inside = await api.post(`/v1/${tenant.slug}/me/email`, { newEmail: `y-${unique()}@example.com`, currentPassword: PASSWORD }, { token: member.accessToken });
    expect(inside.status, JSON.stringify(inside.body)).toBe(200);
  });

  it('leaves neither address in the audit log once the user is erased', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const newEmail = `erased-${unique()}@example.org`;
    const token = await requestChange(tenant.slug, member.accessToken, newEmail);
    expect((await confirm(tenant.slug, token)).status).toBe(200);
    expect((await api.delete(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    await sql('update app_user set deleted_at = ? where id = ?', [new Date(Date.now() - 31 * 86_400_000), member.id]);

    await server.services.erasure.sweepExpired(server.services.orm.em.fork() as EntityManager);

    const rows = await sql<{ action: string; details: Record<string, unknown> }>('select action, details from audit_event where tenant_id = ?', [tenant.id]);
    expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(['UserEmailChangeRequested', 'UserEmailChanged', 'GdprErasureCompleted']));
    expect(JSON.stringify(rows)).not.toContain(member.email);
    expect(JSON.stringify(rows)).not.toContain(newEmail);
  });
});
