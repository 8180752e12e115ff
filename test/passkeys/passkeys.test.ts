import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { claimsOf, issueApiKey } from '../helpers/principals.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { useTestServer } from '../helpers/suite.js';
import { setMfaPolicy } from '../helpers/tenant-settings.js';
import { SoftwareAuthenticator } from '../helpers/webauthn-authenticator.js';

/** The relying party the server derives from PUBLIC_URL: id `id.passkeys.test`, this origin. */
const ORIGIN = 'https://id.passkeys.test';
const suite = useTestServer({ smtp: true, env: { PUBLIC_URL: ORIGIN } });

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return (await suite.server.services.orm.em.fork().execute(query, params)) as T[];
}

async function auditOf(tenantId: string, action: string): Promise<{ actor_id: string | null; target_id: string | null; details: Record<string, unknown> }[]> {
  const rows = await sql<{ actor_id: string | null; target_id: string | null; details: Record<string, unknown> | string }>(
    'select actor_id, target_id, details from audit_event where tenant_id = ? and action = ? order by created_at, id',
    [tenantId, action],
  );
  return rows.map((r) => ({ ...r, details: typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : r.details }));
}

interface Member {
  tenant: TestTenant;
  email: string;
  id: string;
  accessToken: string;
  refreshToken: string;
}

async function newMember(tenant?: TestTenant): Promise<Member> {
  const t = tenant ?? (await createTenant(suite.api));
  const member = await signupMember(suite.api, t.slug);
  return { tenant: t, ...member };
}

/** Registers a passkey on `authenticator` for the signed-in member; returns the answer's passkey. */
async function registerPasskey(member: Member, authenticator: SoftwareAuthenticator, name?: string) {
  const { api } = suite;
  const options = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: member.accessToken });
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  const response = authenticator.create(options.body as never);
  const verify = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-verify`, { response, ...(name ? { name } : {}) }, { token: member.accessToken });
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return verify.body.passkey as { id: string; name: string; backupEligible: boolean; backedUp: boolean; transports: string[] };
}

/** Runs auth/passkey/options (with `email` when given) and answers the options and challengeId. */
async function signInOptions(slug: string, email?: string) {
  const res = await suite.api.post(`/v1/${slug}/auth/passkey/options`, email === undefined ? {} : { email });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { challengeId: string; options: { challenge: string; rpId: string; allowCredentials: { id: string }[]; userVerification: string } };
}

describe('passkey registration (mfa/passkeys/*)', () => {
  it('registers a discoverable, user-verified passkey with real ES256 attestation, lists it, and mails and audits the change', async () => {
    const { api, sink } = suite;
    const member = await newMember();
    const options = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: member.accessToken });
    expect(options.status, JSON.stringify(options.body)).toBe(200);
    expect(options.body.rp.id).toBe('id.passkeys.test');
    expect(options.body.user.name).toBe(member.email);
    expect(options.body.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(options.body.excludeCredentials).toEqual([]);
    // the challenge is stored only hashed
    const stored = await sql<{ challenge_hash: string }>('select challenge_hash from webauthn_challenge where user_id = ?', [member.id]);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.challenge_hash).not.toContain(options.body.challenge);

    const authenticator = new SoftwareAuthenticator(ORIGIN, { backupEligible: true });
    const response = authenticator.create(options.body as never);
    const verify = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-verify`, { response, name: 'Laptop' }, { token: member.accessToken });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expect(verify.body.passkey).toMatchObject({ name: 'Laptop', backupEligible: true, backedUp: true, transports: ['internal', 'hybrid'], lastUsedAt: null });

    const list = await api.get(`/v1/${member.tenant.slug}/me/passkeys`, { token: member.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([verify.body.passkey]);
    // the personal-data export lists it too (never the public key)
    const exported = await api.get(`/v1/${member.tenant.slug}/me/export`, { token: member.accessToken });
    expect(exported.status).toBe(200);
    expect(exported.body.passkeys).toEqual([verify.body.passkey]);

    const [event] = await auditOf(member.tenant.id, 'PasskeyRegistered');
    expect(event).toMatchObject({ actor_id: member.id, target_id: member.id, details: { passkeyId: verify.body.passkey.id, name: 'Laptop', fmt: 'none' } });
    const mail = await sink.waitFor(member.email, (m) => m.subject.includes('Passkey added'));
    expect(mail.text).toContain('A passkey');

    // the challenge was single-use: the same response again finds no open challenge
    const replay = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-verify`, { response }, { token: member.accessToken });
    expectError(replay, 400, 'BAD_REQUEST', 'passkey_challenge_invalid');

    // the next options exclude the registered credential
    const next = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: member.accessToken });
    expect(next.body.excludeCredentials.map((c: { id: string }) => c.id)).toEqual(authenticator.credentialIds);
  });

  it('refuses a stale session (even refreshed), so a stolen token cannot add a passkey', async () => {
    const { api } = suite;
    const member = await newMember();
    await sql('update session set authenticated_at = ? where id = ?', [new Date(Date.now() - 11 * 60 * 1000), claimsOf(member.accessToken).sid]);
    const options = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: member.accessToken });
    expectError(options, 401, 'UNAUTHORIZED', 'reauthentication_required');
    const refreshed = await api.post(`/v1/${member.tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken });
    expect(refreshed.status).toBe(200);
    expectError(
      await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: refreshed.body.accessToken }),
      401, 'UNAUTHORIZED', 'reauthentication_required',
    );
    const verify = await api.post(
      `/v1/${member.tenant.slug}/mfa/passkeys/registration-verify`,
      { response: new SoftwareAuthenticator(ORIGIN).create({ challenge: 'AAAA', rp: { id: 'id.passkeys.test' }, user: { id: 'x' } }) },
      { token: refreshed.body.accessToken },
    );
    expectError(verify, 401, 'UNAUTHORIZED', 'reauthentication_required');
    expect(await sql('select id from passkey where user_id = ?', [member.id])).toHaveLength(0);
  });

  it('refuses a response for another origin, another RP id, without user verification, or for another challenge', async () => {
    const { api } = suite;
    const member = await newMember();
    const attempt = async (overrides: Parameters<SoftwareAuthenticator['create']>[1]) => {
      const options = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: member.accessToken });
      const response = new SoftwareAuthenticator(ORIGIN).create(options.body as never, overrides);
      return api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-verify`, { response }, { token: member.accessToken });
    };
    expectError(await attempt({ origin: 'https://evil.example' }), 400, 'BAD_REQUEST', 'invalid_passkey');
    expectError(await attempt({ rpId: 'evil.example' }), 400, 'BAD_REQUEST', 'invalid_passkey');
    expectError(await attempt({ noUserVerification: true }), 400, 'BAD_REQUEST', 'invalid_passkey');
    expectError(await attempt({ challenge: Buffer.from('another challenge').toString('base64url') }), 400, 'BAD_REQUEST', 'invalid_passkey');
    expect(await sql('select id from passkey where user_id = ?', [member.id])).toHaveLength(0);
  });

  it('refuses API keys on every passkey route of a user', async () => {
    const { api, server } = suite;
    const tenant = await createTenant(api);
    const key = await issueApiKey(api, server, tenant);
    expectError(await api.get(`/v1/${tenant.slug}/me/passkeys`, { token: key.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await api.post(`/v1/${tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: key.plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(
      await api.delete(`/v1/${tenant.slug}/me/passkeys/00000000-0000-4000-8000-000000000000`, { token: key.plaintext }),
      401, 'UNAUTHORIZED', 'user_token_required',
    );
  });
});

describe('passkey sign-in (auth/passkey/*)', () => {
  it('signs in with a discoverable credential alone, with real signatures, and counts the signature counter up', async () => {
    const { api } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const passkey = await registerPasskey(member, authenticator);

    const { challengeId, options } = await signInOptions(member.tenant.slug);
    expect(options.allowCredentials).toEqual([]);
    expect(options.userVerification).toBe('required');
    expect(options.rpId).toBe('id.passkeys.test');
    const res = await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response: authenticator.get(options) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.user.id).toBe(member.id);
    expect(typeof res.body.refreshToken).toBe('string');
    const me = await api.get(`/v1/${member.tenant.slug}/me`, { token: res.body.accessToken });
    expect(me.body.email).toBe(member.email);
    // the new session counts as a recent sign-in: it may add another passkey at once
    const again = await api.post(`/v1/${member.tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: res.body.accessToken });
    expect(again.status).toBe(200);

    const [login] = (await auditOf(member.tenant.id, 'UserLogin')).filter((e) => e.details.method === 'passkey');
    expect(login).toMatchObject({ actor_id: member.id, details: { method: 'passkey', passkeyId: passkey.id } });
    const [row] = await sql<{ counter: string; last_used_at: Date | null }>('select counter, last_used_at from passkey where id = ?', [passkey.id]);
    expect(Number(row!.counter)).toBe(2);
    expect(row!.last_used_at).not.toBeNull();

    // the refresh token of a passkey session rotates like any other
    const refreshed = await api.post(`/v1/${member.tenant.slug}/auth/refresh`, { refreshToken: res.body.refreshToken });
    expect(refreshed.status).toBe(200);
  });

  it('signs in with email first, and answers an email with passkeys, one without and an unknown one alike', async () => {
    const { api } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    await registerPasskey(member, authenticator);

    const known = await signInOptions(member.tenant.slug, member.email.toUpperCase());
    const res = await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId: known.challengeId, response: authenticator.get(known.options) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.user.id).toBe(member.id);

    // everything but the random challenge is the same whether the address has passkeys, has none or is unknown
    const bare = await newMember(member.tenant);
    const shapes = await Promise.all([member.email, bare.email, `nobody-${member.id}@example.com`].map(async (email) => {
      const { options } = await signInOptions(member.tenant.slug, email);
      return { ...options, challenge: typeof options.challenge };
    }));
    expect(shapes[0]!.allowCredentials).toEqual([]);
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[2]).toEqual(shapes[0]);

    // a challenge asked for one email does not sign in another user's passkey
    const other = await newMember(member.tenant);
    const otherAuthenticator = new SoftwareAuthenticator(ORIGIN);
    await registerPasskey(other, otherAuthenticator);
    const bound = await signInOptions(member.tenant.slug, member.email);
    const wrongUser = await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, {
      challengeId: bound.challengeId, response: otherAuthenticator.get(bound.options, { credentialId: otherAuthenticator.credentialIds[0] }),
    });
    expectError(wrongUser, 401, 'UNAUTHORIZED', 'invalid_passkey');
  });

  it('satisfies a Required MFA policy by itself (no second code asked), where the password alone does not', async () => {
    const { api, server } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    await registerPasskey(member, authenticator);
    await setMfaPolicy(server, member.tenant.slug, 'Required');

    const password = await api.post(`/v1/${member.tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expectError(password, 401, 'UNAUTHORIZED', 'mfa_required');
    const { challengeId, options } = await signInOptions(member.tenant.slug);
    const res = await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response: authenticator.get(options) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.user.id).toBe(member.id);
  });

  it('refuses a replayed challenge and a replayed assertion', async () => {
    const { api } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    await registerPasskey(member, authenticator);
    const { challengeId, options } = await signInOptions(member.tenant.slug);
    const response = authenticator.get(options);
    expect((await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response })).status).toBe(200);
    expectError(await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response }), 401, 'UNAUTHORIZED', 'passkey_challenge_invalid');
    // a fresh challenge id with the old assertion: the signed challenge does not match
    const fresh = await signInOptions(member.tenant.slug);
    expectError(await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId: fresh.challengeId, response }), 401, 'UNAUTHORIZED', 'invalid_passkey');
    // an expired challenge
    const late = await signInOptions(member.tenant.slug);
    await sql('update webauthn_challenge set expires_at = ? where id = ?', [new Date(Date.now() - 1000), late.challengeId]);
    expectError(
      await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId: late.challengeId, response: authenticator.get(late.options) }),
      401, 'UNAUTHORIZED', 'passkey_challenge_invalid',
    );
  });

  it('refuses a wrong origin, a wrong RP id, a missing user verification and a forged signature, and audits the failure', async () => {
    const { api } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    await registerPasskey(member, authenticator);
    const tryWith = async (overrides: Parameters<SoftwareAuthenticator['get']>[1], tamper?: (r: ReturnType<SoftwareAuthenticator['get']>) => void) => {
      const { challengeId, options } = await signInOptions(member.tenant.slug);
      const response = authenticator.get(options, overrides);
      tamper?.(response);
      return api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response });
    };
    expectError(await tryWith({ origin: 'https://id.passkeys.test.evil.example' }), 401, 'UNAUTHORIZED', 'invalid_passkey');
    expectError(await tryWith({ rpId: 'passkeys.test' }), 401, 'UNAUTHORIZED', 'invalid_passkey');
    expectError(await tryWith({ noUserVerification: true }), 401, 'UNAUTHORIZED', 'invalid_passkey');
    expectError(
      await tryWith({}, (r) => {
        const sig = Buffer.from(r.response.signature, 'base64url');
        sig.writeUInt8(sig.readUInt8(sig.length - 1) ^ 0x01, sig.length - 1);
        r.response.signature = sig.toString('base64url');
      }),
      401, 'UNAUTHORIZED', 'invalid_passkey',
    );
    const failures = (await auditOf(member.tenant.id, 'UserLoginFailed')).filter((e) => e.details.via === 'passkey');
    expect(failures).toHaveLength(4);
    expect(failures.every((e) => e.target_id === member.id && e.details.reason === 'invalid_passkey')).toBe(true);
  });

  it('refuses a cloned authenticator whose counter went back, audits PasskeyCloneSuspected and mails the owner', async () => {
    const { api, sink } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const passkey = await registerPasskey(member, authenticator);
    const clone = authenticator.clone();
    for (let i = 0; i < 2; i++) {
      const { challengeId, options } = await signInOptions(member.tenant.slug);
      expect((await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response: authenticator.get(options) })).status).toBe(200);
    }
    // the clone's counter (2) is behind the stored one (3)
    const { challengeId, options } = await signInOptions(member.tenant.slug);
    const res = await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response: clone.get(options) });
    expectError(res, 401, 'UNAUTHORIZED', 'passkey_counter_regressed');
    const [event] = await auditOf(member.tenant.id, 'PasskeyCloneSuspected');
    expect(event).toMatchObject({ target_id: member.id, details: { passkeyId: passkey.id, storedCounter: 3, presentedCounter: 2 } });
    const [row] = await sql<{ counter: string }>('select counter from passkey where id = ?', [passkey.id]);
    expect(Number(row!.counter)).toBe(3);
    const mail = await sink.waitFor(member.email, (m) => m.subject.includes('A passkey sign-in was refused'));
    expect(mail.text).toContain('the passkey looks copied');
  });

  it('accepts authenticators that always report a zero counter', async () => {
    const { api } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN, { counting: false });
    await registerPasskey(member, authenticator);
    for (let i = 0; i < 2; i++) {
      const { challengeId, options } = await signInOptions(member.tenant.slug);
      expect((await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response: authenticator.get(options) })).status).toBe(200);
    }
  });

  it('does not sign a credential of one tenant in to another', async () => {
    const { api } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    await registerPasskey(member, authenticator);
    const otherTenant = await createTenant(api);
    const { challengeId, options } = await signInOptions(otherTenant.slug);
    const res = await api.post(`/v1/${otherTenant.slug}/auth/passkey/verify`, { challengeId, response: authenticator.get(options, { credentialId: authenticator.credentialIds[0] }) });
    expectError(res, 401, 'UNAUTHORIZED', 'invalid_passkey');
    // nor a challenge of one tenant in the other
    const ownOptions = await signInOptions(member.tenant.slug);
    const crossed = await api.post(`/v1/${otherTenant.slug}/auth/passkey/verify`, { challengeId: ownOptions.challengeId, response: authenticator.get(ownOptions.options) });
    expectError(crossed, 401, 'UNAUTHORIZED', 'passkey_challenge_invalid');
  });

  it('refuses a suspended user, and a deleted passkey no longer signs in', async () => {
    const { api, sink } = suite;
    const member = await newMember();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const passkey = await registerPasskey(member, authenticator);

    await sql("update app_user set status = 'Suspended' where id = ?", [member.id]);
    const suspended = await signInOptions(member.tenant.slug);
    expectError(
      await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId: suspended.challengeId, response: authenticator.get(suspended.options) }),
      401, 'UNAUTHORIZED', 'user_suspended',
    );
    await sql("update app_user set status = 'Active' where id = ?", [member.id]);

    // another user cannot delete it; a stale session cannot either
    const other = await newMember(member.tenant);
    expectError(await api.delete(`/v1/${member.tenant.slug}/me/passkeys/${passkey.id}`, { token: other.accessToken }), 404, 'NOT_FOUND', 'passkey_not_found');
    await sql('update session set authenticated_at = ? where id = ?', [new Date(Date.now() - 11 * 60 * 1000), claimsOf(member.accessToken).sid]);
    expectError(await api.delete(`/v1/${member.tenant.slug}/me/passkeys/${passkey.id}`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'reauthentication_required');
    await sql('update session set authenticated_at = ? where id = ?', [new Date(), claimsOf(member.accessToken).sid]);

    const removed = await api.delete(`/v1/${member.tenant.slug}/me/passkeys/${passkey.id}`, { token: member.accessToken });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect((await api.get(`/v1/${member.tenant.slug}/me/passkeys`, { token: member.accessToken })).body.items).toEqual([]);
    expect(await auditOf(member.tenant.id, 'PasskeyDeleted')).toMatchObject([{ actor_id: member.id, details: { passkeyId: passkey.id } }]);
    await sink.waitFor(member.email, (m) => m.subject.includes('Passkey removed'));
    expectError(await api.delete(`/v1/${member.tenant.slug}/me/passkeys/${passkey.id}`, { token: member.accessToken }), 404, 'NOT_FOUND', 'passkey_not_found');

    const { challengeId, options } = await signInOptions(member.tenant.slug);
    expectError(
      await api.post(`/v1/${member.tenant.slug}/auth/passkey/verify`, { challengeId, response: authenticator.get(options) }),
      401, 'UNAUTHORIZED', 'invalid_passkey',
    );
  });
});

describe('passkey sign-in and the login budget', () => {
  let strict: TestServer;
  let strictApi: Api;
  beforeAll(async () => {
    strict = await startTestServer({ PUBLIC_URL: ORIGIN, RATE_LIMIT_SCALE: '1' });
    strictApi = new Api(strict.url);
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('counts failed passkey assertions against the account\'s login budget, shared with password login', async () => {
    const tenant = await createTenant(strictApi);
    const member = await signupMember(strictApi, tenant.slug);
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const options = await strictApi.post(`/v1/${tenant.slug}/mfa/passkeys/registration-options`, undefined, { token: member.accessToken });
    const registered = await strictApi.post(`/v1/${tenant.slug}/mfa/passkeys/registration-verify`, { response: authenticator.create(options.body as never) }, { token: member.accessToken });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);

    const forged = async () => {
      const res = await strictApi.post(`/v1/${tenant.slug}/auth/passkey/options`, {});
      const response = authenticator.get(res.body.options, { origin: 'https://evil.example' });
      return strictApi.post(`/v1/${tenant.slug}/auth/passkey/verify`, { challengeId: res.body.challengeId, response });
    };
    for (let i = 0; i < 10; i++) expectError(await forged(), 401, 'UNAUTHORIZED', 'invalid_passkey');
    const blocked = await forged();
    expectError(blocked, 429, 'TOO_MANY_REQUESTS');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expectError(await strictApi.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD }), 429, 'TOO_MANY_REQUESTS');
  });
});
