import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { tokenFromMail } from '../helpers/email-verification.js';
import { freePort, startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.js';
import { setMfaPolicy } from '../helpers/tenant-settings.js';
import { Authenticator } from '../helpers/totp.js';

/**
 * The account-takeover paths of docs/security.md, each attacked through HTTP: MFA bootstrap with a
 * stolen password, pre-registered accounts claimed through the provider, provider sign-in and the
 * MFA policy, factor changes with a stolen token, stale reset links, password guessing with a
 * session, phishing through tenant names and invites, and an empty audit search.
 */

let provider: TestOpenIdProvider;
let sink: SmtpSink;
let server: TestServer;
let api: Api;
/** A second instance with the contract's unscaled limits and a small daily invite limit. */
let strict: TestServer;
let strictApi: Api;
const INVITES_PER_DAY = 3;

beforeAll(async () => {
  provider = await startOpenIdProvider();
  sink = await startSmtpSink();
  const port = await freePort();
  server = await startTestServer({
    PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, IDP_ISSUER: provider.issuer, SMTP_URL: sink.url,
  });
  api = new Api(server.url);
  const strictPort = await freePort();
  strict = await startTestServer({
    PORT: String(strictPort), PUBLIC_URL: `http://127.0.0.1:${strictPort}`, IDP_ISSUER: provider.issuer, SMTP_URL: sink.url,
    RATE_LIMIT_SCALE: '1', INVITES_PER_TENANT_PER_DAY: String(INVITES_PER_DAY),
  });
  strictApi = new Api(strict.url);
});
afterAll(async () => {
  await server?.close();
  await strict?.close();
  await provider?.close();
  await sink?.close();
});

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

const mailsTo = (email: string) => sink.messages.filter((m) => m.to.includes(email.toLowerCase()));

/** Waits for the next mail to `email` whose subject contains `subject`, after those already received. */
async function nextMail(email: string, subject: string, before = mailsTo(email).length): Promise<ReceivedMail> {
  return sink.waitFor(email, (m) => mailsTo(email).indexOf(m) >= before && m.subject.includes(subject));
}

/** Asks for an email code (email alone) and returns it as delivered. */
async function emailCode(slug: string, email: string, client = api): Promise<string> {
  const before = mailsTo(email).length;
  const res = await client.post(`/v1/${slug}/auth/request-email-otp`, { email });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const mail = await nextMail(email, 'sign-in code', before);
  return /^ {4}(\d{6})$/m.exec(mail.text)![1]!;
}

async function auditActions(tenantId: string, userId: string): Promise<{ action: string; details: Record<string, unknown> }[]> {
  return sql('select action, details from audit_event where tenant_id = ? and (target_id = ? or actor_id = ?) order by created_at, id', [
    tenantId, userId, userId,
  ]);
}

/** A tenant whose admin configured a client at the test provider. */
async function idpTenant(client = api): Promise<TestTenant> {
  const tenant = await createTenant(client, `Idp ${unique()}`);
  const clientId = `client-${unique()}`;
  const clientSecret = `secret-${unique()}-${unique()}`;
  await provider.addClient(clientId, clientSecret, `${client.baseUrl}/v1/${tenant.slug}/oauth/idp/callback`);
  const put = await client.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId, clientSecret }, { token: tenant.accessToken });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return tenant;
}

/** The whole provider flow for a provider account (a fresh one unless `sub`); returns the callback's answer. */
async function providerSignIn(
  slug: string,
  email: string,
  options: { verified?: boolean; amr?: string[]; sub?: string; client?: Api } = {},
): Promise<ApiResponse> {
  const client = options.client ?? api;
  const sub = options.sub ?? `sub-${unique()}`;
  provider.setAccount(sub, { email, email_verified: options.verified ?? true, ...(options.amr ? { amr: options.amr } : {}) });
  const start = await client.get(`/v1/${slug}/oauth/idp/start`);
  expect(start.status, JSON.stringify(start.body)).toBe(200);
  const callback = await provider.signIn(start.body.authorizationUrl as string, sub);
  return client.get(callback.pathname + callback.search);
}

async function enrollTotp(slug: string, token: string, client = api): Promise<Authenticator> {
  const enroll = await client.post(`/v1/${slug}/mfa/totp/enroll`, undefined, { token });
  expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
  const authenticator = new Authenticator(enroll.body.secret);
  const verify = await client.post(`/v1/${slug}/mfa/totp/verify`, { code: await authenticator.nextCode() }, { token });
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return authenticator;
}

describe('TOTP bootstrap under Required needs the mailbox too', () => {
  it('refuses both initial steps with the password alone, for a Member and an Admin, and enrols nothing', async () => {
    const tenant = await createTenant(api);
    await setMfaPolicy(server, tenant.slug, 'Required');
    const member = await signupMember(api, tenant.slug);
    for (const email of [member.email, tenant.adminEmail]) {
      const enroll = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email, password: PASSWORD });
      expectError(enroll, 401, 'UNAUTHORIZED', 'mfa_required');
      expect(enroll.body.details.methods).toEqual(['email']);
      expect(enroll.body.details).not.toHaveProperty('secret');
      const verify = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, { email, password: PASSWORD, code: '123456' });
      expectError(verify, 401, 'UNAUTHORIZED', 'mfa_required');
      expect(verify.body.details.methods).toEqual(['email']);
    }
    const rows = await sql<{ pending: string | null; active: string | null }>(
      'select totp_pending_secret_enc as pending, totp_secret_enc as active from app_user where tenant_id = ?', [tenant.id],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toEqual({ pending: null, active: null });
  });

  it('refuses a wrong email code, then one code serves both steps and is spent afterwards', async () => {
    const tenant = await createTenant(api);
    await setMfaPolicy(server, tenant.slug, 'Required');
    const email = tenant.adminEmail;
    const wrong = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email, password: PASSWORD, emailOtpCode: '000000' });
    expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_mfa_code');

    const emailOtpCode = await emailCode(tenant.slug, email);
    const enroll = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email, password: PASSWORD, emailOtpCode });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    const authenticator = new Authenticator(enroll.body.secret);
    const noCode = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, { email, password: PASSWORD, code: await authenticator.nextCode() });
    expectError(noCode, 401, 'UNAUTHORIZED', 'mfa_required');
    const verify = await api.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
      email, password: PASSWORD, code: await authenticator.nextCode(), emailOtpCode,
    });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expect(await sql('select 1 from email_otp where user_id = ?', [tenant.adminId])).toHaveLength(0);
  });

  it('keeps password-only enrolment under Optional', async () => {
    const tenant = await createTenant(api);
    const enroll = await api.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: tenant.adminEmail, password: PASSWORD });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
  });
});

describe('a pre-registered account never survives a provider sign-in', () => {
  it('lets the provider-verified owner take the account over and removes everything of the pre-registration', async () => {
    const tenant = await idpTenant();
    const victim = `victim-${unique()}@example.com`;
    // The attacker registers the victim's address (never verified) with his own password and leaves a
    // reset link open. (With a second factor or a passkey the provider would not reclaim it at all:
    // idp_link_required, and the owner reclaims it through the mailbox; see account-reclaim.)
    const attacker = await signupMember(api, tenant.slug, victim);
    const resetMailsBefore = mailsTo(victim).length;
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: victim })).status).toBe(200);
    const resetToken = tokenFromMail((await nextMail(victim, 'Reset your password', resetMailsBefore)).text);

    const session = await providerSignIn(tenant.slug, victim);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.user).toMatchObject({ id: attacker.id, email: victim });

    // Nothing of the attacker works any more.
    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email: victim, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: attacker.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: attacker.refreshToken }), 401, 'UNAUTHORIZED');
    const reset = await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token: resetToken, newPassword: 'another long password 1' });
    expectError(reset, 401, 'UNAUTHORIZED', 'invalid_token');
    const [row] = await sql<Record<string, unknown>>(
      `select password_hash, totp_secret_enc, totp_pending_secret_enc, totp_enrolled_at, email_verified_at from app_user where id = ?`,
      [attacker.id],
    );
    expect(row).toMatchObject({ password_hash: null, totp_secret_enc: null, totp_pending_secret_enc: null, totp_enrolled_at: null });
    expect(row!.email_verified_at).not.toBeNull();
    expect(await sql('select 1 from session where user_id = ? and revoked_at is null', [attacker.id])).toHaveLength(1);
    const me = await api.get(`/v1/${tenant.slug}/me`, { token: session.body.accessToken });
    expect(me.body).toMatchObject({ emailVerified: true, totpEnrolled: false });
    // the owner can enrol a factor of her own with the recent provider sign-in
    const ownFactor = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: session.body.accessToken });
    expect(ownFactor.status, JSON.stringify(ownFactor.body)).toBe(200);

    const audits = await auditActions(tenant.id, attacker.id);
    expect(audits.map((a) => a.action)).toEqual(expect.arrayContaining(['UserPasswordChanged', 'UserEmailVerified', 'IdpOauthLinked']));
    expect(audits.find((a) => a.action === 'IdpOauthLinked')!.details).toMatchObject({ via: 'reclaimed_unverified_account' });
    const revoked = await sql<{ details: Record<string, unknown> }>(
      `select details from audit_event where tenant_id = ? and action = 'SessionRevoked'
          and target_id in (select id::text from session where user_id = ?)`,
      [tenant.id, attacker.id],
    );
    expect(revoked.map((r) => r.details.reason)).toContain('account_taken_over');
  });

  it('refuses a provider identity whose email the provider has not verified, and changes nothing', async () => {
    const tenant = await idpTenant();
    const victim = `victim-${unique()}@example.com`;
    const attacker = await signupMember(api, tenant.slug, victim);
    const res = await providerSignIn(tenant.slug, victim, { verified: false });
    expectError(res, 401, 'UNAUTHORIZED', 'idp_email_unverified');
    expect(await sql('select 1 from idp_identity where user_id = ?', [attacker.id])).toHaveLength(0);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: attacker.accessToken })).status).toBe(200);
  });
});

describe('provider sign-in follows the MFA policy', () => {
  it('under Required asks a new provider user for the email code, completed once at auth/mfa/complete', async () => {
    const tenant = await idpTenant();
    await setMfaPolicy(server, tenant.slug, 'Required');
    const email = `idp-${unique()}@example.com`;
    const first = await providerSignIn(tenant.slug, email);
    expectError(first, 401, 'UNAUTHORIZED', 'mfa_required');
    expect(first.body.details.methods).toEqual(['email']);
    expect(first.body).not.toHaveProperty('accessToken');
    const mfaToken = first.body.details.mfaToken as string;
    expect(mfaToken.length).toBeGreaterThanOrEqual(40);
    expect(await sql('select 1 from mfa_challenge where token_hash = ?', [mfaToken])).toHaveLength(0);

    const wrong = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken, emailOtpCode: '000000' });
    expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    const emailOtpCode = await emailCode(tenant.slug, email);
    const done = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken, emailOtpCode });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.user.email).toBe(email);
    const replay = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken, emailOtpCode });
    expectError(replay, 401, 'UNAUTHORIZED', 'invalid_token');

    const logins = (await auditActions(tenant.id, done.body.user.id)).filter((a) => a.action === 'UserLogin');
    expect(logins.map((a) => a.details.method)).toEqual(['idp+email_otp']);
  });

  it('under Optional asks a provider user with TOTP for a TOTP code; an expired token is refused', async () => {
    const tenant = await idpTenant();
    const email = `idp-${unique()}@example.com`;
    const sub = `sub-${unique()}`;
    const first = await providerSignIn(tenant.slug, email, { sub });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const authenticator = await enrollTotp(tenant.slug, first.body.accessToken);

    const second = await providerSignIn(tenant.slug, email, { sub });
    expectError(second, 401, 'UNAUTHORIZED', 'mfa_required');
    expect(second.body.details.methods).toEqual(['totp']);
    const byEmail = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken: second.body.details.mfaToken, emailOtpCode: '123456' });
    expectError(byEmail, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    const done = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, {
      mfaToken: second.body.details.mfaToken, totpCode: await authenticator.nextCode(),
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    const third = await providerSignIn(tenant.slug, email, { sub });
    expectError(third, 401, 'UNAUTHORIZED', 'mfa_required');
    await sql('update mfa_challenge set expires_at = ? where user_id = ?', [new Date(Date.now() - 1000), first.body.user.id]);
    const late = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken: third.body.details.mfaToken, totpCode: await authenticator.nextCode() });
    expectError(late, 401, 'UNAUTHORIZED', 'token_expired');
  });

  it('accepts multi-factor authentication reported by the provider in amr', async () => {
    const tenant = await idpTenant();
    await setMfaPolicy(server, tenant.slug, 'Required');
    const viaMfa = await providerSignIn(tenant.slug, `idp-${unique()}@example.com`, { amr: ['pwd', 'otp'] });
    expect(viaMfa.status, JSON.stringify(viaMfa.body)).toBe(200);
    const passwordOnly = await providerSignIn(tenant.slug, `idp-${unique()}@example.com`, { amr: ['pwd'] });
    expectError(passwordOnly, 401, 'UNAUTHORIZED', 'mfa_required');
  });

  it('spends the mfaToken after 5 wrong codes, and wrong codes count against the account login budget', async () => {
    const tenant = await idpTenant(strictApi);
    await (strict.services.orm.em.fork() as EntityManager).execute('update tenant set mfa_policy = ? where id = ?', ['Required', tenant.id]);
    const email = `idp-${unique()}@example.com`;
    const sub = `sub-${unique()}`;
    for (let round = 0; round < 2; round++) {
      const challenge = await providerSignIn(tenant.slug, email, { sub, client: strictApi });
      expectError(challenge, 401, 'UNAUTHORIZED', 'mfa_required');
      const mfaToken = challenge.body.details.mfaToken as string;
      for (let i = 0; i < 5; i++) {
        const wrong = await strictApi.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken, emailOtpCode: '000000' });
        expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
      }
      const spent = await strictApi.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken, emailOtpCode: '000000' });
      expectError(spent, 401, 'UNAUTHORIZED', 'invalid_token');
    }
    // Ten wrong codes spent the account's budget from this address: the next try is refused before any code is checked.
    const last = await providerSignIn(tenant.slug, email, { sub, client: strictApi });
    const blocked = await strictApi.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken: last.body.details.mfaToken, emailOtpCode: '123456' });
    expectError(blocked, 429, 'TOO_MANY_REQUESTS');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await api.get('/v1/openapi.json');
    expect(doc.body.paths['/v1/{tenantSlug}/auth/mfa/complete']?.post).toBeDefined();
  });
});

describe('adding a factor needs a recent sign-in, and every factor change is mailed', () => {
  it('refuses a stolen access token of an older session, even after refreshing it, until the user signs in again', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const sessionId = JSON.parse(Buffer.from(member.accessToken.split('.')[1]!, 'base64url').toString()).sid as string;
    await sql('update session set authenticated_at = ? where id = ?', [new Date(Date.now() - 11 * 60 * 1000), sessionId]);

    const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: member.accessToken });
    expectError(enroll, 401, 'UNAUTHORIZED', 'reauthentication_required');
    const verify = await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: '123456' }, { token: member.accessToken });
    expectError(verify, 401, 'UNAUTHORIZED', 'reauthentication_required');
    const refreshed = await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken });
    expect(refreshed.status).toBe(200);
    expectError(await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: refreshed.body.accessToken }), 401, 'UNAUTHORIZED', 'reauthentication_required');
    expect((await sql<{ p: string | null }>('select totp_pending_secret_enc as p from app_user where id = ?', [member.id]))[0]!.p).toBeNull();

    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    const before = mailsTo(member.email).length;
    await enrollTotp(tenant.slug, login.body.accessToken);
    const notice = await nextMail(member.email, 'Authenticator app added', before);
    expect(notice.subject).toContain('to your account');

    const disabled = await api.post(`/v1/${tenant.slug}/users/${member.id}/totp/disable`, undefined, { token: tenant.accessToken });
    expect(disabled.status).toBe(200);
    const removed = await nextMail(member.email, 'Authenticator app removed', before);
    expect(removed.text).toContain('An admin of the workspace made this change.');
  });
});

describe('a password change ends open reset links', () => {
  it('refuses a reset link issued before PATCH me/password', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const before = mailsTo(member.email).length;
    await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: member.email });
    const token = tokenFromMail((await nextMail(member.email, 'Reset your password', before)).text);
    const change = await api.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword: 'a brand new password 7' }, { token: member.accessToken });
    expect(change.status, JSON.stringify(change.body)).toBe(200);
    const reset = await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token, newPassword: 'the attacker password 9' });
    expectError(reset, 401, 'UNAUTHORIZED', 'invalid_token');
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: 'a brand new password 7' })).status).toBe(200);
  });
});

describe('guessing the current password shares the login budget and is audited', () => {
  it('answers 429 after 10 wrong current passwords, also for login from that address', async () => {
    const tenant = await createTenant(strictApi);
    const member = await signupMember(strictApi, tenant.slug);
    for (let i = 0; i < 10; i++) {
      const wrong = await strictApi.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: `guess ${i}`, newPassword: 'whatever password 12' }, { token: member.accessToken });
      expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_credentials');
    }
    const blocked = await strictApi.patch(`/v1/${tenant.slug}/me/password`, { currentPassword: PASSWORD, newPassword: 'whatever password 12' }, { token: member.accessToken });
    expectError(blocked, 429, 'TOO_MANY_REQUESTS');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expectError(await strictApi.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD }), 429, 'TOO_MANY_REQUESTS');
    const failures = (await (strict.services.orm.em.fork() as EntityManager).execute(
      `select details from audit_event where tenant_id = ? and action = 'UserLoginFailed' and target_id = ?`, [tenant.id, member.id],
    )) as { details: Record<string, unknown> }[];
    expect(failures).toHaveLength(10);
    expect(failures[0]!.details).toMatchObject({ via: 'password_change', reason: 'invalid_credentials' });
  });
});

describe('tenant names in mail and the daily invite limit', () => {
  it('quotes and defangs a hostile tenant name in the invite mail', async () => {
    const tenant = await createTenant(api, `Security alert: verify at https://evil.example ${unique()}`);
    const invitee = `invitee-${unique()}@example.com`;
    const res = await api.post(`/v1/${tenant.slug}/invites`, { email: invitee }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const mail = await sink.waitFor(invitee);
    expect(mail.subject).toMatch(/"Security alert: verify at https\[:\]\/\/evil\[\.\]example [0-9a-f]+"/);
    for (const part of [mail.subject, mail.text, mail.html]) {
      expect(part).not.toContain('https://evil.example');
      expect(part).not.toContain('evil.example');
    }
    // the only links are the service's own accept page (the slug, derived from the name, is a path segment of it)
    const hrefs = [...mail.html.matchAll(/href="([^"]*)"/g)].map((m) => new URL(m[1]!.replace(/&amp;/g, '&')));
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) {
      expect(href.pathname).toBe(`/app/${tenant.slug}/accept-invite`);
      expect(href.origin).toBe(server.url);
    }
  });

  it('answers 429 with Retry-After once a tenant created its daily invites; other tenants are unaffected', async () => {
    const tenant = await createTenant(strictApi);
    for (let i = 0; i < INVITES_PER_DAY; i++) {
      const ok = await strictApi.post(`/v1/${tenant.slug}/invites`, { email: `inv-${unique()}@example.com` }, { token: tenant.accessToken });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    }
    const refused = await strictApi.post(`/v1/${tenant.slug}/invites`, { email: `inv-${unique()}@example.com` }, { token: tenant.accessToken });
    expectError(refused, 429, 'TOO_MANY_REQUESTS');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(86_000);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(refused.body.details.retryAfterSeconds).toBe(retryAfter);
    const other = await createTenant(strictApi);
    const elsewhere = await strictApi.post(`/v1/${other.slug}/invites`, { email: `inv-${unique()}@example.com` }, { token: other.accessToken });
    expect(elsewhere.status).toBe(200);
  });
});

describe('an empty audit search is a bad request', () => {
  it('answers 400 for ?search= and 200 for a real search', async () => {
    const tenant = await createTenant(api);
    const empty = await api.get(`/v1/${tenant.slug}/audit?search=`, { token: tenant.accessToken });
    expectError(empty, 400, 'BAD_REQUEST', 'validation_failed');
    expect(empty.body.details.issues).toEqual([expect.objectContaining({ path: 'search' })]);
    expect((await api.get(`/v1/${tenant.slug}/audit?search=Tenant`, { token: tenant.accessToken })).status).toBe(200);
  });
});
