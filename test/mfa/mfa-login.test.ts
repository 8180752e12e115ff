import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.js';
import { setMfaPolicy } from '../helpers/tenant-settings.js';
import { Authenticator } from '../helpers/totp.js';

let sink: SmtpSink;
let server: TestServer;
let api: Api;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ SMTP_URL: sink.url, MAIL_FROM: 'identity@example.test' });
  api = new Api(server.url);
});
afterAll(async () => {
  await server.close();
  await sink.close();
});

const mailsTo = (email: string) => sink.messages.filter((m) => m.to.includes(email.toLowerCase()));

/** The 6-digit code of a sign-in mail, read from the plain-text body. */
function codeOf(mail: ReceivedMail): string {
  const match = /\b(\d{6})\b/.exec(mail.text);
  if (!match) throw new Error(`no code in mail: ${mail.text}`);
  return match[1]!;
}

/** Asks for an email code and returns it as delivered by the SMTP server. */
async function requestCode(slug: string, email: string, password?: string): Promise<{ code: string; mail: ReceivedMail }> {
  const already = mailsTo(email).length;
  const res = await api.post(`/v1/${slug}/auth/request-email-otp`, password === undefined ? { email } : { email, password });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ ok: true });
  const mail = await sink.waitFor(email, (m) => mailsTo(email).indexOf(m) >= already);
  return { code: codeOf(mail), mail };
}

async function actionsFor(tenantId: string, userId: string): Promise<string[]> {
  const rows = (await server.services.orm.em
    .fork()
    .execute('select action from audit_event where tenant_id = ? and target_id = ? order by created_at, id', [tenantId, userId])) as { action: string }[];
  return rows.map((r) => r.action);
}

/** A tenant under the given policy with a Member (no factor yet). */
async function tenantWithMember(policy: 'Disabled' | 'Optional' | 'Required') {
  const tenant = await createTenant(api);
  await setMfaPolicy(server, tenant.slug, policy);
  const member = await signupMember(api, tenant.slug);
  return { tenant, member };
}

async function enrollTotp(slug: string, token: string): Promise<Authenticator> {
  const enroll = await api.post(`/v1/${slug}/mfa/totp/enroll`, undefined, { token });
  expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
  const authenticator = new Authenticator(enroll.body.secret);
  const verify = await api.post(`/v1/${slug}/mfa/totp/verify`, { code: await authenticator.nextCode() }, { token });
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return authenticator;
}

describe('mfaPolicy Required', () => {
  it('refuses a password-only login with mfa_required, then the email code completes it', async () => {
    const { tenant, member } = await tenantWithMember('Required');

    const passwordOnly = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expectError(passwordOnly, 401, 'UNAUTHORIZED', 'mfa_required');
    expect(passwordOnly.body.details.methods).toEqual(['email', 'totp']);
    expect(passwordOnly.body).not.toHaveProperty('accessToken');

    const { code, mail } = await requestCode(tenant.slug, member.email);
    expect(mail.from).toBe('identity@example.test');
    expect(mail.subject).toContain('sign-in code');
    expect(mail.text).toContain('10 minutes');
    expect(mail.html).toContain(`>${code}<`);

    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: code });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.user).toMatchObject({ id: member.id, email: member.email });
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: login.body.accessToken })).status).toBe(200);

    // Single use.
    const replay = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: code });
    expectError(replay, 401, 'UNAUTHORIZED', 'invalid_mfa_code');

    const actions = await actionsFor(tenant.id, member.id);
    expect(actions).toEqual(expect.arrayContaining(['MfaEmailOtpSent', 'MfaEmailOtpVerified', 'MfaEmailOtpFailed', 'UserLogin']));
    expect(server.logs.some((line) => line.includes(code))).toBe(false);
  });

  it('completes the login with a TOTP code, once per code, and refuses a wrong one', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const authenticator = await enrollTotp(tenant.slug, member.accessToken);

    const passwordOnly = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expectError(passwordOnly, 401, 'UNAUTHORIZED', 'mfa_required');
    // An enrolled user is offered TOTP only: no fallback to the mailbox.
    expect(passwordOnly.body.details.methods).toEqual(['totp']);

    const wrong = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, totpCode: authenticator.wrongCode() });
    expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_mfa_code');

    const totpCode = await authenticator.nextCode();
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, totpCode });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const replay = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, totpCode });
    expectError(replay, 401, 'UNAUTHORIZED', 'invalid_mfa_code');

    // The email factor is neither sent nor accepted for an enrolled user.
    const codeMails = () => mailsTo(member.email).filter((m) => m.subject.includes('sign-in code')).length;
    const before = codeMails();
    const ask = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email, password: PASSWORD });
    expect(ask.status).toBe(200);
    const byEmail = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: '123456' });
    expectError(byEmail, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    expect(codeMails()).toBe(before);

    expect(await actionsFor(tenant.id, member.id)).toEqual(expect.arrayContaining(['MfaTotpEnrolled', 'MfaTotpVerified', 'UserLoginFailed']));
  });

  it('lets a user without a factor enroll TOTP through the initial steps and get a session', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    // Under Required the mailbox is proved too: one emailed code serves both steps.
    const { code: emailOtpCode } = await requestCode(tenant.slug, member.email);
    const enroll = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD, emailOtpCode });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    const authenticator = new Authenticator(enroll.body.secret);
    const verify = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
      email: member.email, password: PASSWORD, totpCode: await authenticator.nextCode(), emailOtpCode,
    });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, {
      email: member.email, password: PASSWORD, totpCode: await authenticator.nextCode(),
    });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
  });

  it('kills an email code after 5 wrong tries, and a new request replaces the old code', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const first = await requestCode(tenant.slug, member.email);
    const second = await requestCode(tenant.slug, member.email);
    if (first.code !== second.code) {
      const old = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: first.code });
      expectError(old, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    }
    const wrong = second.code === '000000' ? '000001' : '000000';
    // The replaced code's try (if any) counted against the new one: use up the rest.
    const [row] = (await server.services.orm.em
      .fork()
      .execute('select attempts from email_otp where user_id = ?', [member.id])) as { attempts: number }[];
    for (let i = row!.attempts; i < 5; i++) {
      const res = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: wrong });
      expectError(res, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    }
    const right = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: second.code });
    expectError(right, 401, 'UNAUTHORIZED', 'invalid_mfa_code');

    // A fresh code works again.
    const third = await requestCode(tenant.slug, member.email);
    const ok = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: third.code });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('allows 4 wrong tries before the right code', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const { code } = await requestCode(tenant.slug, member.email);
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < 4; i++) {
      const res = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: wrong });
      expectError(res, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    }
    const ok = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: code });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('stores the email code hashed and refuses it once expired', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const { code } = await requestCode(tenant.slug, member.email);
    const em = server.services.orm.em.fork();
    const [row] = (await em.execute('select code_hash, created_at, expires_at from email_otp where user_id = ? and tenant_id = ?', [
      member.id, tenant.id,
    ])) as { code_hash: string; created_at: Date; expires_at: Date }[];
    expect(row!.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.code_hash).not.toContain(code);
    expect(new Date(row!.expires_at).getTime() - new Date(row!.created_at).getTime()).toBe(600_000);

    await em.execute(`update email_otp set expires_at = now() - interval '1 second' where user_id = ?`, [member.id]);
    const expired = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: code });
    expectError(expired, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
  });

  it('needs the right password to complete, whatever the code', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const { code } = await requestCode(tenant.slug, member.email);
    const res = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'wrong password', emailOtpCode: code });
    expectError(res, 401, 'UNAUTHORIZED', 'invalid_credentials');
    const ok = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: code });
    expect(ok.status).toBe(200);
  });
});

describe('concurrent use of one code', () => {
  it('lets exactly one of two parallel logins use the same email code', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const { code } = await requestCode(tenant.slug, member.email);
    const body = { email: member.email, password: PASSWORD, emailOtpCode: code };
    const results = await Promise.all([api.post(`/v1/${tenant.slug}/auth/login`, body), api.post(`/v1/${tenant.slug}/auth/login`, body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('lets exactly one of two parallel logins use the same TOTP code', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const authenticator = await enrollTotp(tenant.slug, member.accessToken);
    const body = { email: member.email, password: PASSWORD, totpCode: await authenticator.nextCode() };
    const results = await Promise.all([api.post(`/v1/${tenant.slug}/auth/login`, body), api.post(`/v1/${tenant.slug}/auth/login`, body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });
});

describe('auth/request-email-otp', () => {
  it('answers ok for an unknown account without sending anything', async () => {
    const { tenant } = await tenantWithMember('Required');
    const nobody = `nobody-${unique()}@example.com`;
    const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: nobody });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    // Delivery is synchronous: a mail would be in the sink by now.
    expect(mailsTo(nobody)).toHaveLength(0);
  });

  it('checks the password when one is given', async () => {
    const { tenant, member } = await tenantWithMember('Required');
    const wrong = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email, password: 'not it' });
    expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_credentials');
    const unknown = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: `x-${unique()}@example.com`, password: 'not it' });
    expectError(unknown, 401, 'UNAUTHORIZED', 'invalid_credentials');
    expect(unknown.body.message).toBe(wrong.body.message);
    expect(mailsTo(member.email)).toHaveLength(0);
    await requestCode(tenant.slug, member.email, PASSWORD);
  });

  it.each([
    ['no email', {}],
    ['a bad email', { email: 'nope' }],
    ['an empty password', { email: 'a@example.com', password: '' }],
  ])('answers 400 for %s', async (_label, body) => {
    const tenant = await createTenant(api);
    expectError(await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, body), 400, 'BAD_REQUEST');
  });

  it('sends nothing when the policy does not use the email factor', async () => {
    const { tenant, member } = await tenantWithMember('Optional');
    const res = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
    expect(res.status).toBe(200);
    expect(mailsTo(member.email)).toHaveLength(0);
  });
});

describe('mfaPolicy Optional', () => {
  it('lets users without TOTP in with the password and asks enrolled users for a TOTP code', async () => {
    const { tenant, member } = await tenantWithMember('Optional');
    const plain = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);

    const authenticator = await enrollTotp(tenant.slug, member.accessToken);
    const passwordOnly = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expectError(passwordOnly, 401, 'UNAUTHORIZED', 'mfa_required');
    expect(passwordOnly.body.details.methods).toEqual(['totp']);

    const emailCode = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD, emailOtpCode: '123456' });
    expectError(emailCode, 401, 'UNAUTHORIZED', 'invalid_mfa_code');

    const login = await api.post(`/v1/${tenant.slug}/auth/login`, {
      email: member.email, password: PASSWORD, totpCode: await authenticator.nextCode(),
    });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
  });

  it('is the policy of a new tenant', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    await enrollTotp(tenant.slug, member.accessToken);
    const res = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expectError(res, 401, 'UNAUTHORIZED', 'mfa_required');
  });
});

describe('mfaPolicy Disabled', () => {
  it('signs in with the password alone, even a user with TOTP enrolled', async () => {
    const { tenant, member } = await tenantWithMember('Optional');
    await enrollTotp(tenant.slug, member.accessToken);
    await setMfaPolicy(server, tenant.slug, 'Disabled');
    const res = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const otp = await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email: member.email });
    expect(otp.status).toBe(200);
    expect(mailsTo(member.email).filter((m) => m.subject.includes('sign-in code'))).toHaveLength(0);
  });
});
