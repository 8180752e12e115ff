import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique } from '../helpers/api.js';
import { setRequireEmailVerification, tokenFromMail } from '../helpers/email-verification.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

// The actions an admin takes for a user from the console: resend an invite, send a reset or a
// verification mail, restore a deleted user (docs/api-rules.md "Users and sign-up").

let server: TestServer;
let sink: SmtpSink;
let api: Api;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ SMTP_URL: sink.url });
  api = new Api(server.url);
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

function db(): EntityManager {
  return server.services.orm.em.fork() as EntityManager;
}

async function actionsOn(tenantId: string, targetId: string): Promise<{ action: string; actor_id: string | null; details: Record<string, unknown> }[]> {
  const rows = (await db().execute('select action, actor_id, details from audit_event where tenant_id = ? and target_id = ? order by created_at, id', [
    tenantId, targetId,
  ])) as { action: string; actor_id: string | null; details: Record<string, unknown> | string }[];
  return rows.map((r) => ({ ...r, details: typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : r.details }));
}

const isInvite = (m: { subject: string }) => m.subject.startsWith('You are invited');
const isReset = (m: { subject: string }) => m.subject.startsWith('Reset your password');
const isVerification = (m: { subject: string }) => m.subject.startsWith('Confirm your email address');

describe('POST invites/{id}/resend', () => {
  it('mails a new link with the same role; the old token stops working and the new one signs the colleague up', async () => {
    const tenant = await createTenant(api);
    const email = `colleague-${unique()}@example.com`;
    const first = await api.post(`/v1/${tenant.slug}/invites`, { email, role: 'Admin' }, { token: tenant.accessToken });
    expect(first.status).toBe(200);
    await sink.waitFor(email, isInvite);

    const resent = await api.post(`/v1/${tenant.slug}/invites/${first.body.invite.id}/resend`, undefined, { token: tenant.accessToken });
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    expect(resent.body.invite).toMatchObject({ email, role: 'Admin', status: 'Open' });
    expect(resent.body.invite.id).not.toBe(first.body.invite.id);
    expect(resent.body.token).not.toBe(first.body.token);
    const mail = await sink.waitFor(email, (m) => isInvite(m) && m.text.includes(encodeURIComponent(resent.body.token as string)));
    expect(mail.text).toMatch(/valid until (Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \w+ \d{1,2}, \d{4} at \d{1,2}:\d{2}\s?[AP]M UTC/);
    expect(mail.text).not.toMatch(/\d{4}-\d{2}-\d{2}T|Invitation token/);

    expectError(await api.post('/v1/invites/accept', { token: first.body.token, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invite_invalid');
    const accepted = await api.post('/v1/invites/accept', { token: resent.body.token, password: PASSWORD });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.user).toMatchObject({ email, role: 'Admin' });

    const created = await actionsOn(tenant.id, resent.body.invite.id as string);
    expect(created.map((e) => e.action)).toContain('InviteCreated');
    expect(created.find((e) => e.action === 'InviteCreated')!.details.resendOf).toBe(first.body.invite.id);
    expect((await actionsOn(tenant.id, first.body.invite.id as string)).map((e) => `${e.action}:${String(e.details.reason ?? '')}`)).toContain('InviteRevoked:superseded');
  });

  it('refuses an accepted or revoked invite (409 invite_not_open), an unknown one (404), and another tenant\'s (401 tenant_mismatch)', async () => {
    const tenant = await createTenant(api);
    const other = await createTenant(api);
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: `x-${unique()}@example.com` }, { token: tenant.accessToken });
    expectError(await api.post(`/v1/${other.slug}/invites/${invite.body.invite.id}/resend`, undefined, { token: tenant.accessToken }), 401, 'UNAUTHORIZED', 'tenant_mismatch');
    expectError(await api.post(`/v1/${other.slug}/invites/${invite.body.invite.id}/resend`, undefined, { token: other.accessToken }), 404, 'NOT_FOUND', 'not_found');
    await api.post('/v1/invites/accept', { token: invite.body.token, password: PASSWORD });
    expectError(await api.post(`/v1/${tenant.slug}/invites/${invite.body.invite.id}/resend`, undefined, { token: tenant.accessToken }), 409, 'CONFLICT', 'invite_not_open');
    const revoked = await api.post(`/v1/${tenant.slug}/invites`, { email: `y-${unique()}@example.com` }, { token: tenant.accessToken });
    await api.delete(`/v1/${tenant.slug}/invites/${revoked.body.invite.id}`, { token: tenant.accessToken });
    expectError(await api.post(`/v1/${tenant.slug}/invites/${revoked.body.invite.id}/resend`, undefined, { token: tenant.accessToken }), 409, 'CONFLICT', 'invite_not_open');
    expectError(await api.post(`/v1/${tenant.slug}/invites/00000000-0000-4000-8000-000000000000/resend`, undefined, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
  });
});

describe('POST users/{userId}/password-reset and verification-email', () => {
  it('mails the user a reset link the admin never sees; the user sets a new password with it', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const res = await api.post(`/v1/${tenant.slug}/users/${member.id}/password-reset`, undefined, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const resetMail = await sink.waitFor(member.email, isReset);
    // a product's mail: the link, its lifetime in words, nothing to hand to an API
    expect(resetMail.text).toContain('The link works once and expires in 1 hour.');
    expect(resetMail.text).not.toMatch(/to the API|hour\(s\)/);
    const token = tokenFromMail(resetMail.text);
    const done = await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: 'a brand new passphrase 42' });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'a brand new passphrase 42' })).status).toBe(200);
    const audit = await actionsOn(tenant.id, member.id);
    expect(audit.find((e) => e.action === 'UserPasswordResetSent')).toMatchObject({ actor_id: tenant.adminId, details: { email: member.email } });
  });

  it('mails an unverified user a verification link that verifies them, and refuses a verified one with 409 email_already_verified', async () => {
    const tenant = await createTenant(api);
    await setRequireEmailVerification(server, tenant.slug, true);
    const email = `pending-${unique()}@example.com`;
    const signup = await api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: PASSWORD });
    expect(signup.status, JSON.stringify(signup.body)).toBe(200);
    const userId = signup.body.user.id as string;
    await sink.waitFor(email, isVerification); // the one mailed at sign-up
    const verificationMails = () => sink.messages.filter((m) => m.to.includes(email) && isVerification(m));
    const before = verificationMails().length;
    const sent = await api.post(`/v1/${tenant.slug}/users/${userId}/verification-email`, undefined, { token: tenant.accessToken });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await expect.poll(() => verificationMails().length, { timeout: 10_000 }).toBe(before + 1);
    const latest = verificationMails().at(-1)!;
    // the link of the sign-up mail was replaced by the new one
    expectError(await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token: tokenFromMail(verificationMails()[0]!.text) }), 401, 'UNAUTHORIZED', 'invalid_token');
    const verified = await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token: tokenFromMail(latest.text) });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expectError(await api.post(`/v1/${tenant.slug}/users/${userId}/verification-email`, undefined, { token: tenant.accessToken }), 409, 'CONFLICT', 'email_already_verified');
    expect((await actionsOn(tenant.id, userId)).map((e) => e.action)).toContain('UserVerificationMailSent');
  });

  it('answers 404 for a deleted user and for another tenant\'s user, and 403 to a Member', async () => {
    const tenant = await createTenant(api);
    const other = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const stranger = await signupMember(api, other.slug);
    expectError(await api.post(`/v1/${tenant.slug}/users/${stranger.id}/password-reset`, undefined, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expectError(await api.post(`/v1/${tenant.slug}/users/${tenant.adminId}/password-reset`, undefined, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    await api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken });
    expectError(await api.post(`/v1/${tenant.slug}/users/${member.id}/verification-email`, undefined, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
  });
});

describe('POST users/{userId}/restore', () => {
  it('brings back a user an admin deleted, who signs in again with the same role; the old sessions stay ended', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    await api.patch(`/v1/${tenant.slug}/users/${member.id}`, { role: 'Admin' }, { token: tenant.accessToken });
    expect((await api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).status).toBe(200);
    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');

    const restored = await api.post(`/v1/${tenant.slug}/users/${member.id}/restore`, undefined, { token: tenant.accessToken });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body).toMatchObject({ id: member.id, email: member.email, role: 'Admin' });
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.user.role).toBe('Admin');
    expect((await actionsOn(tenant.id, member.id)).find((e) => e.action === 'UserRestored')).toMatchObject({ actor_id: tenant.adminId });
    // a live user is not "restored"
    expectError(await api.post(`/v1/${tenant.slug}/users/${member.id}/restore`, undefined, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
  });

  it('does not restore a user who deleted their own account (an erasure request), one past the retention, or over a new account with the address', async () => {
    const tenant = await createTenant(api);
    const leaver = await signupMember(api, tenant.slug);
    expect((await api.delete(`/v1/${tenant.slug}/me`, { token: leaver.accessToken })).status).toBe(200);
    expectError(await api.post(`/v1/${tenant.slug}/users/${leaver.id}/restore`, undefined, { token: tenant.accessToken }), 409, 'CONFLICT', 'erasure_requested_by_user');

    const replaced = await signupMember(api, tenant.slug);
    await api.delete(`/v1/${tenant.slug}/users/${replaced.id}`, { token: tenant.accessToken });
    const again = await api.post(`/v1/${tenant.slug}/auth/signup`, { email: replaced.email, password: PASSWORD });
    expect(again.status).toBe(200);
    expectError(await api.post(`/v1/${tenant.slug}/users/${replaced.id}/restore`, undefined, { token: tenant.accessToken }), 409, 'CONFLICT', 'email_taken');

    const old = await signupMember(api, tenant.slug);
    await api.delete(`/v1/${tenant.slug}/users/${old.id}`, { token: tenant.accessToken });
    await db().execute(`update app_user set deleted_at = now() - interval '31 days' where id = ?`, [old.id]);
    expectError(await api.post(`/v1/${tenant.slug}/users/${old.id}/restore`, undefined, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
  });
});
