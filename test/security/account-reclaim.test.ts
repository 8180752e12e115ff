import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USER_CREDENTIAL_TABLES } from '../../src/services/lifecycle/account-credentials.js';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { tokenFromMail } from '../helpers/email-verification.js';
import { freePort, startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { Authenticator } from '../helpers/totp.js';
import { SoftwareAuthenticator } from '../helpers/webauthn-authenticator.js';

/**
 * A pre-registrant (someone who signed up with the victim's address, never verified) sets up every
 * way back in he can: a passkey, TOTP with recovery codes, an email code, a second provider link.
 * When the owner of the address reclaims the account, through the mailbox (password reset) or
 * through the tenant's provider, none of it may survive (docs/security.md "Pre-registered accounts").
 */

let provider: TestOpenIdProvider;
let sink: SmtpSink;
let server: TestServer;
let api: Api;
let origin: string;

beforeAll(async () => {
  provider = await startOpenIdProvider();
  sink = await startSmtpSink();
  const port = await freePort();
  // localhost, not 127.0.0.1: a WebAuthn relying-party id is a host name
  origin = `http://localhost:${port}`;
  server = await startTestServer({ PORT: String(port), PUBLIC_URL: origin, IDP_ISSUER: provider.issuer, SMTP_URL: sink.url });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
  await sink?.close();
});

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

async function idpTenant(): Promise<TestTenant> {
  const tenant = await createTenant(api, `Reclaim ${unique()}`);
  const clientId = `client-${unique()}`;
  const clientSecret = `secret-${unique()}-${unique()}`;
  await provider.addClient(clientId, clientSecret, `${origin}/v1/${tenant.slug}/oauth/idp/callback`);
  const put = await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId, clientSecret }, { token: tenant.accessToken });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return tenant;
}

async function providerSignIn(slug: string, email: string, sub = `sub-${unique()}`): Promise<ApiResponse> {
  provider.setAccount(sub, { email, email_verified: true });
  const start = await api.get(`/v1/${slug}/oauth/idp/start`);
  expect(start.status, JSON.stringify(start.body)).toBe(200);
  const callback = await provider.signIn(start.body.authorizationUrl as string, sub);
  return api.get(callback.pathname + callback.search);
}

interface Foothold {
  userId: string;
  accessToken: string;
  refreshToken: string;
  passkey: SoftwareAuthenticator;
  totp: Authenticator;
  recoveryCodes: string[];
}

/** The attacker signs up with `email` and sets up a passkey, TOTP with recovery codes and an open email code. */
async function preRegister(tenant: TestTenant, email: string): Promise<Foothold> {
  const attacker = await signupMember(api, tenant.slug, email);
  const token = { token: attacker.accessToken };
  const passkey = new SoftwareAuthenticator(origin);
  const options = await api.post(`/v1/${tenant.slug}/mfa/passkeys/registration-options`, undefined, token);
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  const registered = await api.post(`/v1/${tenant.slug}/mfa/passkeys/registration-verify`, { response: passkey.create(options.body as never) }, token);
  expect(registered.status, JSON.stringify(registered.body)).toBe(200);
  const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, token);
  expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
  const totp = new Authenticator(enroll.body.secret as string);
  const verify = await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: await totp.nextCode() }, token);
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  expect((await api.post(`/v1/${tenant.slug}/auth/request-email-otp`, { email })).status).toBe(200);
  return { userId: attacker.id, accessToken: attacker.accessToken, refreshToken: attacker.refreshToken, passkey, totp, recoveryCodes: verify.body.recoveryCodes as string[] };
}

/** A passkey sign-in with the attacker's authenticator (discoverable, no email). */
async function passkeySignIn(slug: string, authenticator: SoftwareAuthenticator): Promise<ApiResponse> {
  const options = await api.post(`/v1/${slug}/auth/passkey/options`, {});
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  return api.post(`/v1/${slug}/auth/passkey/verify`, { challengeId: options.body.challengeId, response: authenticator.get(options.body.options) });
}

/** Rows still held for the user in every credential table. */
async function credentialRows(userId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [table, column] of Object.entries(USER_CREDENTIAL_TABLES)) {
    const live = table === 'session' ? ' and revoked_at is null' : table === 'account_token' ? ' and consumed_at is null' : '';
    const [row] = await sql<{ n: number }>(`select count(*)::int as n from ${table} where ${column} = ?${live}`, [userId]);
    counts[table] = row!.n;
  }
  return counts;
}

/** The attacker's every way back in is refused. */
async function expectLockedOut(tenant: TestTenant, email: string, foothold: Foothold): Promise<void> {
  expectError(await passkeySignIn(tenant.slug, foothold.passkey), 401, 'UNAUTHORIZED', 'invalid_passkey');
  expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD, totpCode: await foothold.totp.nextCode() }), 401, 'UNAUTHORIZED', 'invalid_credentials');
  expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD, recoveryCode: foothold.recoveryCodes[0] }), 401, 'UNAUTHORIZED', 'invalid_credentials');
  expectError(await api.get(`/v1/${tenant.slug}/me`, { token: foothold.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
  expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: foothold.refreshToken }), 401, 'UNAUTHORIZED');
}

describe('reclaiming a pre-registered account', () => {
  it('through a password reset removes the pre-registrant\'s passkey, TOTP, recovery codes, codes and sessions', async () => {
    const tenant = await createTenant(api, `Reclaim ${unique()}`);
    const victim = `victim-${unique()}@example.com`;
    const foothold = await preRegister(tenant, victim);
    // today's main let this passkey keep signing in after the reclaim
    expect((await passkeySignIn(tenant.slug, foothold.passkey)).status).toBe(200);

    const before = sink.messages.length;
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: victim })).status).toBe(200);
    const mail = await sink.waitFor(victim, (m) => sink.messages.indexOf(m) >= before && m.subject.includes('Reset your password'));
    const done = await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token: tokenFromMail(mail.text), newPassword: 'the owner has a long passphrase' });
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    await expectLockedOut(tenant, victim, foothold);
    expect(await credentialRows(foothold.userId)).toEqual(Object.fromEntries(Object.keys(USER_CREDENTIAL_TABLES).map((t) => [t, 0])));
    const owner = await api.post(`/v1/${tenant.slug}/auth/login`, { email: victim, password: 'the owner has a long passphrase' });
    expect(owner.status, JSON.stringify(owner.body)).toBe(200);
    const me = await api.get(`/v1/${tenant.slug}/me`, { token: owner.body.accessToken });
    expect(me.body).toMatchObject({ emailVerified: true, totpEnrolled: false });
    expect((await api.get(`/v1/${tenant.slug}/me/passkeys`, { token: owner.body.accessToken })).body.items).toEqual([]);
    const audits = await sql<{ action: string; details: Record<string, unknown> }>(
      `select action, details from audit_event where tenant_id = ? and target_id = ? order by created_at, id`,
      [tenant.id, foothold.userId],
    );
    expect(audits.filter((a) => a.action === 'PasskeyDeleted').map((a) => a.details.reason)).toEqual(['account_reclaimed']);
    expect(audits.map((a) => a.action)).toEqual(expect.arrayContaining(['MfaTotpDisabled', 'UserPasswordChanged', 'UserEmailVerified']));
  });

  it('through the tenant\'s provider removes the password and sessions of a pre-registration without factors, keeping only the provider identity that proved the address', async () => {
    const tenant = await idpTenant();
    const victim = `victim-${unique()}@example.com`;
    const attacker = await signupMember(api, tenant.slug, victim);
    // a second provider identity of the attacker, linked by its own sign-in
    await sql(`insert into idp_identity (id, tenant_id, user_id, issuer, subject, email, created_at) values (gen_random_uuid(), ?, ?, 'https://attacker.example', 'attacker-sub', ?, now())`, [
      tenant.id, attacker.id, victim,
    ]);

    const session = await providerSignIn(tenant.slug, victim);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.user).toMatchObject({ id: attacker.id, email: victim });

    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email: victim, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: attacker.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    const left = await credentialRows(attacker.id);
    expect(left).toEqual({ ...Object.fromEntries(Object.keys(USER_CREDENTIAL_TABLES).map((t) => [t, 0])), session: 1, idp_identity: 1 });
    const links = await sql<{ issuer: string }>('select issuer from idp_identity where user_id = ?', [attacker.id]);
    expect(links.map((l) => l.issuer)).toEqual([provider.issuer]);
  });

  it('never through the provider when the account has a second factor or a passkey: idp_link_required, nothing removed (the mailbox reclaims it)', async () => {
    const tenant = await idpTenant();
    const victim = `victim-${unique()}@example.com`;
    const foothold = await preRegister(tenant, victim);
    const before = await credentialRows(foothold.userId);
    expectError(await providerSignIn(tenant.slug, victim), 401, 'UNAUTHORIZED', 'idp_link_required');
    expect(await credentialRows(foothold.userId)).toEqual(before);
  });

  it('never through the provider for an Admin, the workspace\'s creator included (finding 4 of 2026-11-26)', async () => {
    const tenant = await idpTenant();
    const [creator] = await sql<{ email_verified_at: Date | null }>('select email_verified_at from app_user where id = ?', [tenant.adminId]);
    expect(creator!.email_verified_at).toBeNull();
    expectError(await providerSignIn(tenant.slug, tenant.adminEmail), 401, 'UNAUTHORIZED', 'idp_link_required');
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: tenant.adminEmail, password: PASSWORD })).status).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken })).status).toBe(200);
  });

  it('mails the workspace\'s creator a verification link at creation, which verifies the address', async () => {
    const tenant = await createTenant(api, `Reclaim ${unique()}`);
    const mail = await sink.waitFor(tenant.adminEmail, (m) => m.subject.startsWith('Confirm your email address'));
    const done = await api.post(`/v1/${tenant.slug}/auth/verify-email`, { token: tokenFromMail(mail.text) });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: tenant.accessToken })).body.emailVerified).toBe(true);
  });

  it('leaves a verified owner\'s own passkey and factor in place on an ordinary reset', async () => {
    const tenant = await createTenant(api, `Reclaim ${unique()}`);
    const email = `owner-${unique()}@example.com`;
    const owner = await preRegister(tenant, email);
    await sql('update app_user set email_verified_at = now() where id = ?', [owner.userId]);
    const before = sink.messages.length;
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email })).status).toBe(200);
    const mail = await sink.waitFor(email, (m) => sink.messages.indexOf(m) >= before && m.subject.includes('Reset your password'));
    expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/complete`, { token: tokenFromMail(mail.text), newPassword: 'a new long passphrase' })).status).toBe(200);
    expect((await passkeySignIn(tenant.slug, owner.passkey)).status).toBe(200);
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: 'a new long passphrase' });
    expectError(login, 401, 'UNAUTHORIZED', 'mfa_required');
  });
});

describe('the list of credential tables', () => {
  it('names every table that references a user, except those that hold no way to sign in', async () => {
    // history and administration rows: an invite records who accepted it; the roles and organization
    // memberships an admin gave the account (like its Admin/Member role) stay with it; none signs anyone in
    const notCredentials = new Set(['invite', 'user_access_role', 'organization_membership']);
    const referencing = await sql<{ table_name: string; column_name: string }>(
      `select distinct tc.table_name, kcu.column_name
         from information_schema.table_constraints tc
         join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
         join information_schema.constraint_column_usage ccu on ccu.constraint_name = tc.constraint_name and ccu.table_schema = tc.table_schema
        where tc.constraint_type = 'FOREIGN KEY' and ccu.table_name = 'app_user' and tc.table_schema = current_schema()`,
    );
    // a user named without a foreign key (oidc-provider's storage keeps it as its accountId)
    const named = await sql<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
        where table_schema = current_schema() and column_name = 'account_id'`,
    );
    const found = Object.fromEntries([...referencing, ...named].filter((r) => !notCredentials.has(r.table_name)).map((r) => [r.table_name, r.column_name]));
    expect(found).toEqual(USER_CREDENTIAL_TABLES);
  });
});
