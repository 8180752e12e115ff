import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { freePort, startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { claimsOf, issueApiKey } from '../helpers/principals.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.js';
import { Authenticator } from '../helpers/totp.js';

let server: TestServer;
let api: Api;
let strict: TestServer;
let strictApi: Api;
let sink: SmtpSink;
let provider: TestOpenIdProvider;

beforeAll(async () => {
  sink = await startSmtpSink();
  provider = await startOpenIdProvider();
  const port = await freePort();
  server = await startTestServer({ SMTP_URL: sink.url, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, IDP_ISSUER: provider.issuer });
  api = new Api(server.url);
  // Real (unscaled) rate limits, for the per-account budget.
  strict = await startTestServer({ SMTP_URL: sink.url, RATE_LIMIT_SCALE: '1' });
  strictApi = new Api(strict.url);
});
afterAll(async () => {
  await server?.close();
  await strict?.close();
  await sink?.close();
  await provider?.close();
});

const CODE_SHAPE = /^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/;

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

const mailsTo = (email: string) => sink.messages.filter((m) => m.to.includes(email.toLowerCase()));

/** The next mail to `email` whose subject contains `subject`, after the first `before` mails. */
function nextMail(email: string, subject: string, before: number): Promise<ReceivedMail> {
  return sink.waitFor(email, (m) => mailsTo(email).indexOf(m) >= before && m.subject.includes(subject));
}

/** A Member of a new tenant who activated TOTP through the initial steps; `codes` from that answer. */
async function enrolledMember(client: Api = api) {
  const tenant = await createTenant(client);
  const member = await signupMember(client, tenant.slug);
  const enroll = await client.post(`/v1/${tenant.slug}/auth/totp/initial-enroll`, { email: member.email, password: PASSWORD });
  expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
  const authenticator = new Authenticator(enroll.body.secret);
  const verify = await client.post(`/v1/${tenant.slug}/auth/totp/initial-verify`, {
    email: member.email, password: PASSWORD, code: await authenticator.nextCode(),
  });
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return { tenant, member, authenticator, codes: verify.body.recoveryCodes as string[], accessToken: verify.body.accessToken as string };
}

function login(tenant: TestTenant, email: string, extra: Record<string, unknown>, client: Api = api) {
  return client.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD, ...extra });
}

async function audits(tenantId: string, userId: string, action: string) {
  return sql<{ details: Record<string, unknown>; actor_id: string | null }>(
    'select details, actor_id from audit_event where tenant_id = ? and target_id = ? and action = ? order by created_at',
    [tenantId, userId, action],
  );
}

describe('recovery codes issued when TOTP is activated', () => {
  it('returns ten distinct codes once from auth/totp/initial-verify, stores only salted hashes, and counts them on me', async () => {
    const { tenant, member, codes, accessToken } = await enrolledMember();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(CODE_SHAPE);

    const rows = await sql<{ code_hash: string; used_at: Date | null; tenant_id: string }>(
      'select code_hash, used_at, tenant_id from mfa_recovery_code where user_id = ?', [member.id],
    );
    expect(rows).toHaveLength(10);
    const stored = JSON.stringify(rows);
    for (const row of rows) {
      expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.tenant_id).toBe(tenant.id);
      expect(row.used_at).toBeNull();
    }
    for (const code of codes) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(code.replaceAll('-', ''));
    }
    expect(server.logs.some((line) => codes.some((code) => line.includes(code)))).toBe(false);

    const me = await api.get(`/v1/${tenant.slug}/me`, { token: accessToken });
    expect(me.body.recoveryCodesRemaining).toBe(10);
    // Never shown again: not on me, not on a later login.
    expect(JSON.stringify(me.body)).not.toContain(codes[0]);
    // A user without TOTP has no codes: 0 (docs/decisions.md "recoveryCodesRemaining is a number everywhere").
    const other = await signupMember(api, tenant.slug);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: other.accessToken })).body).toMatchObject({ totpEnrolled: false, recoveryCodesRemaining: 0 });
  });

  it('returns the codes from mfa/totp/verify too, and they sign in', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: member.accessToken });
    expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
    const authenticator = new Authenticator(enroll.body.secret);
    const verify = await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: await authenticator.nextCode() }, { token: member.accessToken });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expect(verify.body.ok).toBe(true);
    const codes = verify.body.recoveryCodes as string[];
    expect(codes).toHaveLength(10);
    const res = await login(tenant, member.email, { recoveryCode: codes[3] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});

describe('signing in with a recovery code', () => {
  it('accepts a code in place of a TOTP code once, audits and mails each use, and refuses it the second time', async () => {
    const { tenant, member, codes } = await enrolledMember();
    expectError(await login(tenant, member.email, {}), 401, 'UNAUTHORIZED', 'mfa_required');

    const before = mailsTo(member.email).length;
    // Typed loosely: lower case, without the dashes.
    const ok = await login(tenant, member.email, { recoveryCode: codes[0]!.toLowerCase().replaceAll('-', '') });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.user.id).toBe(member.id);

    const me = await api.get(`/v1/${tenant.slug}/me`, { token: ok.body.accessToken });
    expect(me.body.recoveryCodesRemaining).toBe(9);
    const sessions = await api.get(`/v1/${tenant.slug}/me/sessions`, { token: ok.body.accessToken });
    const current = (sessions.body.items as { current: boolean; method: string }[]).find((s) => s.current);
    expect(current?.method).toBe('password+recovery_code');

    const used = await audits(tenant.id, member.id, 'MfaRecoveryCodeUsed');
    expect(used).toHaveLength(1);
    expect(used[0]!.details).toEqual({ remaining: 9 });
    const logins = await audits(tenant.id, member.id, 'UserLogin');
    expect(logins.at(-1)!.details.method).toBe('password+recovery_code');
    const mail = await nextMail(member.email, 'A recovery code was used', before);
    expect(mail.text).toContain('You have 9 unused recovery codes left.');
    expect(mail.text).not.toContain(codes[0]!);

    // Replay of the same code.
    expectError(await login(tenant, member.email, { recoveryCode: codes[0] }), 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    // A code of another user does not work for this one.
    const other = await enrolledMember();
    expectError(await login(tenant, member.email, { recoveryCode: other.codes[0] }), 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    // Malformed codes are refused the same way; overlong input is a validation error.
    expectError(await login(tenant, member.email, { recoveryCode: 'not-a-code' }), 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    expectError(await login(tenant, member.email, { recoveryCode: 'A'.repeat(65) }), 400, 'BAD_REQUEST', 'validation_failed');
    const failed = await audits(tenant.id, member.id, 'UserLoginFailed');
    expect(failed.map((f) => f.details.reason)).toEqual(['invalid_mfa_code', 'invalid_mfa_code', 'invalid_mfa_code']);
    expect((await audits(tenant.id, member.id, 'MfaRecoveryCodeUsed'))).toHaveLength(1);
    // The other user's code is still unused.
    expect((await login(other.tenant, other.member.email, { recoveryCode: other.codes[0] })).status).toBe(200);
  });

  it('lets exactly one of two concurrent sign-ins spend the same code', async () => {
    const { tenant, member, codes } = await enrolledMember();
    const results = await Promise.all([0, 1, 2].map(() => login(tenant, member.email, { recoveryCode: codes[5] })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401]);
    for (const r of results.filter((x) => x.status === 401)) expectError(r, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    const [row] = await sql<{ n: number }>('select count(*)::int as n from mfa_recovery_code where user_id = ? and used_at is not null', [member.id]);
    expect(row!.n).toBe(1);
  });

  it('counts a wrong recovery code as a failed login against the per-account budget', async () => {
    const { tenant, member, codes } = await enrolledMember(strictApi);
    for (let i = 0; i < 10; i++) {
      expectError(await login(tenant, member.email, { recoveryCode: `AAAA-AAAA-AA${'ABCDEFGHIJ'[i]}A` }, strictApi), 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    }
    // The budget of this account from this address is spent: even a right code is refused before it is checked.
    const blocked = await login(tenant, member.email, { recoveryCode: codes[0] }, strictApi);
    expectError(blocked, 429, 'TOO_MANY_REQUESTS');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    const [row] = await sql<{ n: number }>('select count(*)::int as n from mfa_recovery_code where user_id = ? and used_at is null', [member.id]);
    expect(row!.n).toBe(10);
  });

  it('does not let a recovery code stand in for the email factor of a user without TOTP', async () => {
    const tenant = await createTenant(api);
    await server.services.orm.em.fork().execute('update tenant set mfa_policy = ? where id = ?', ['Required', tenant.id]);
    const member = await signupMember(api, tenant.slug);
    expectError(await login(tenant, member.email, { recoveryCode: 'AAAA-BBBB-CCCC' }), 401, 'UNAUTHORIZED', 'invalid_mfa_code');
  });
});

describe('auth/mfa/complete with a recovery code', () => {
  it('finishes a provider sign-in of a TOTP user with a recovery code, once', async () => {
    const tenant = await createTenant(api, `Idp ${unique()}`);
    const clientId = `client-${unique()}`;
    const clientSecret = `secret-${unique()}-${unique()}`;
    await provider.addClient(clientId, clientSecret, `${api.baseUrl}/v1/${tenant.slug}/oauth/idp/callback`);
    expect((await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId, clientSecret }, { token: tenant.accessToken })).status).toBe(200);
    const email = `idp-${unique()}@example.com`;
    const sub = `sub-${unique()}`;
    provider.setAccount(sub, { email, email_verified: true });
    const providerSignIn = async () => {
      const start = await api.get(`/v1/${tenant.slug}/oauth/idp/start`);
      expect(start.status, JSON.stringify(start.body)).toBe(200);
      const callback = await provider.signIn(start.body.authorizationUrl as string, sub);
      return api.get(callback.pathname + callback.search);
    };
    const first = await providerSignIn();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: first.body.accessToken });
    const verify = await api.post(
      `/v1/${tenant.slug}/mfa/totp/verify`, { code: await new Authenticator(enroll.body.secret).nextCode() }, { token: first.body.accessToken },
    );
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    const codes = verify.body.recoveryCodes as string[];

    const second = await providerSignIn();
    expectError(second, 401, 'UNAUTHORIZED', 'mfa_required');
    const done = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken: second.body.details.mfaToken, recoveryCode: codes[0] });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const logins = await audits(tenant.id, first.body.user.id, 'UserLogin');
    expect(logins.at(-1)!.details.method).toBe('idp+recovery_code');

    const third = await providerSignIn();
    const replay = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken: third.body.details.mfaToken, recoveryCode: codes[0] });
    expectError(replay, 401, 'UNAUTHORIZED', 'invalid_mfa_code');
  });
});

describe('POST mfa/recovery-codes', () => {
  it('replaces the set after a recent sign-in: old codes stop working, new ones work, audited and mailed', async () => {
    const { tenant, member, codes, accessToken } = await enrolledMember();
    const before = mailsTo(member.email).length;
    const res = await api.post(`/v1/${tenant.slug}/mfa/recovery-codes`, undefined, { token: accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const fresh = res.body.recoveryCodes as string[];
    expect(fresh).toHaveLength(10);
    for (const code of fresh) expect(code).toMatch(CODE_SHAPE);
    expect(fresh.some((code) => codes.includes(code))).toBe(false);

    expectError(await login(tenant, member.email, { recoveryCode: codes[1] }), 401, 'UNAUTHORIZED', 'invalid_mfa_code');
    const ok = await login(tenant, member.email, { recoveryCode: fresh[1] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: ok.body.accessToken })).body.recoveryCodesRemaining).toBe(9);

    const generated = await audits(tenant.id, member.id, 'MfaRecoveryCodesGenerated');
    expect(generated).toHaveLength(1);
    expect(generated[0]!.details).toEqual({ count: 10 });
    expect(generated[0]!.actor_id).toBe(member.id);
    const notice = await nextMail(member.email, 'New recovery codes', before);
    expect(notice.text).not.toContain(fresh[0]!);
  });

  it('needs a recent sign-in (a refreshed old session is not enough), TOTP enrolled, and a user token', async () => {
    const { tenant, member, codes, accessToken } = await enrolledMember();
    const sid = claimsOf(accessToken).sid;
    await sql('update session set authenticated_at = ? where id = ?', [new Date(Date.now() - 11 * 60 * 1000), sid]);
    const stale = await api.post(`/v1/${tenant.slug}/mfa/recovery-codes`, undefined, { token: accessToken });
    expectError(stale, 401, 'UNAUTHORIZED', 'reauthentication_required');
    expect(stale.body.details.maxAgeSeconds).toBe(600);
    // The old set still works after the refused attempt.
    expect((await login(tenant, member.email, { recoveryCode: codes[2] })).status).toBe(200);

    const plain = await signupMember(api, tenant.slug);
    expectError(await api.post(`/v1/${tenant.slug}/mfa/recovery-codes`, undefined, { token: plain.accessToken }), 409, 'CONFLICT', 'totp_not_enrolled');

    const apiKey = await issueApiKey(api, server, tenant);
    expectError(await api.post(`/v1/${tenant.slug}/mfa/recovery-codes`, undefined, { token: apiKey.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await api.post(`/v1/${tenant.slug}/mfa/recovery-codes`), 401, 'UNAUTHORIZED');
  });

  it('is gone with the factor: an admin removing TOTP deletes the codes', async () => {
    const { tenant, member, codes } = await enrolledMember();
    const disabled = await api.post(`/v1/${tenant.slug}/users/${member.id}/totp/disable`, undefined, { token: tenant.accessToken });
    expect(disabled.status).toBe(200);
    const [row] = await sql<{ n: number }>('select count(*)::int as n from mfa_recovery_code where user_id = ?', [member.id]);
    expect(row!.n).toBe(0);
    const signedIn = await login(tenant, member.email, {});
    expect(signedIn.status).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: signedIn.body.accessToken })).body.recoveryCodesRemaining).toBe(0);
    // Re-enrolling issues a new set; the old codes stay dead.
    const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: signedIn.body.accessToken });
    const verify = await api.post(
      `/v1/${tenant.slug}/mfa/totp/verify`, { code: await new Authenticator(enroll.body.secret).nextCode() }, { token: signedIn.body.accessToken },
    );
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expectError(await login(tenant, member.email, { recoveryCode: codes[0] }), 401, 'UNAUTHORIZED', 'invalid_mfa_code');
  });

  it('is in the OpenAPI document', async () => {
    const doc = await api.get('/v1/openapi.json');
    expect(doc.body.paths['/v1/{tenantSlug}/mfa/recovery-codes']?.post).toBeDefined();
    expect(doc.body.paths['/v1/{tenantSlug}/auth/login'].post.requestBody.content['application/json'].schema.properties.recoveryCode).toBeDefined();
  });
});

describe('DELETE mfa/totp (the user turns the authenticator off)', () => {
  it('removes the factor and its codes after a recent sign-in: audited, mailed, and the password alone signs in again', async () => {
    const { tenant, member, accessToken } = await enrolledMember();
    const before = mailsTo(member.email).length;
    const res = await api.delete(`/v1/${tenant.slug}/mfa/totp`, { token: accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const me = await api.get(`/v1/${tenant.slug}/me`, { token: accessToken });
    expect(me.body).toMatchObject({ totpEnrolled: false, recoveryCodesRemaining: 0 });
    const [row] = await sql<{ n: number }>('select count(*)::int as n from mfa_recovery_code where user_id = ?', [member.id]);
    expect(row!.n).toBe(0);
    expect((await login(tenant, member.email, {})).status).toBe(200);

    const disabled = await audits(tenant.id, member.id, 'MfaTotpDisabled');
    expect(disabled).toHaveLength(1);
    expect(disabled[0]!.actor_id).toBe(member.id);
    expect(disabled[0]!.details).toMatchObject({ wasEnrolled: true });
    const notice = await nextMail(member.email, 'Authenticator app removed', before);
    expect(notice.text).not.toContain('An admin of the workspace made this change');
    // idempotent
    expect((await api.delete(`/v1/${tenant.slug}/mfa/totp`, { token: accessToken })).status).toBe(200);
  });

  it('needs a recent sign-in and a user token; the factor stays otherwise', async () => {
    const { tenant, member, accessToken } = await enrolledMember();
    await sql('update session set authenticated_at = ? where id = ?', [new Date(Date.now() - 11 * 60 * 1000), claimsOf(accessToken).sid]);
    expectError(await api.delete(`/v1/${tenant.slug}/mfa/totp`, { token: accessToken }), 401, 'UNAUTHORIZED', 'reauthentication_required');
    const apiKey = await issueApiKey(api, server, tenant);
    expectError(await api.delete(`/v1/${tenant.slug}/mfa/totp`, { token: apiKey.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await login(tenant, member.email, {}), 401, 'UNAUTHORIZED', 'mfa_required');
  });

  it('under the Required policy leaves the email code as the second factor', async () => {
    const { tenant, member, accessToken } = await enrolledMember();
    const policy = await api.patch(`/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Required' }, { token: tenant.accessToken });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect((await api.delete(`/v1/${tenant.slug}/mfa/totp`, { token: accessToken })).status).toBe(200);
    const res = await login(tenant, member.email, {});
    expectError(res, 401, 'UNAUTHORIZED', 'mfa_required');
    expect(res.body.details.methods).toEqual(['email', 'totp']);
  });
});
