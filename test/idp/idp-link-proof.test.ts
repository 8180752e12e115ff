import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { freePort, startOpenIdProviders, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { Authenticator } from '../helpers/totp.js';

/**
 * A tenant's own provider must not turn an Admin or an API key into any user (docs/idp.md "Linking an
 * existing account", "A provider per tenant"): an email match never links a verified account, a link
 * needs the account's own signed-in session, changing the issuer needs a recently signed-in Admin (no
 * API key) and is mailed to every Admin, and a provider's `amr` does not waive a user's own factor
 * unless the tenant opted in (`idpMfaTrust`).
 */

let defaultProvider: TestOpenIdProvider;
/** The provider a rogue Admin or a stolen API key points the tenant at. */
let rogue: TestOpenIdProvider;
let sink: SmtpSink;
let server: TestServer;
let api: Api;

beforeAll(async () => {
  [defaultProvider, rogue] = (await startOpenIdProviders(2)) as [TestOpenIdProvider, TestOpenIdProvider];
  sink = await startSmtpSink();
  const port = await freePort();
  server = await startTestServer({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    IDP_ISSUER: defaultProvider.issuer,
    IDP_ALLOW_PRIVATE_ISSUERS: 'true',
    SMTP_URL: sink.url,
  });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
  await Promise.all([defaultProvider, rogue].map((p) => p?.close()));
  await sink?.close();
});

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

/** Registers a client at `provider` for `tenant`; returns the body of PUT oauth/idp/credentials without the issuer. */
async function client(tenant: TestTenant, provider: TestOpenIdProvider): Promise<{ clientId: string; clientSecret: string }> {
  const clientId = `client-${unique()}`;
  const clientSecret = `secret-${unique()}-${unique()}`;
  await provider.addClient(clientId, clientSecret, `${server.url}/v1/${tenant.slug}/oauth/idp/callback`);
  return { clientId, clientSecret };
}

async function signIn(slug: string, provider: TestOpenIdProvider, sub: string): Promise<ApiResponse> {
  const start = await api.get(`/v1/${slug}/oauth/idp/start`);
  expect(start.status, JSON.stringify(start.body)).toBe(200);
  const callback = await provider.signIn(start.body.authorizationUrl as string, sub);
  return api.get(callback.pathname + callback.search);
}

async function apiKey(tenant: TestTenant): Promise<string> {
  const res = await api.post(`/v1/${tenant.slug}/api-keys`, { name: `key ${unique()}`, environment: 'live' }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.plaintext as string;
}

/** A tenant on the default provider whose owner (the first Admin) has a verified address and TOTP. */
async function tenantWithOwnerTotp(): Promise<{ tenant: TestTenant; totp: Authenticator }> {
  const tenant = await createTenant(api, `Link ${unique()}`);
  await sql('update app_user set email_verified_at = now() where tenant_id = ?', [tenant.id]);
  const put = await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, await client(tenant, defaultProvider), { token: tenant.accessToken });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const token = { token: tenant.accessToken };
  const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, token);
  expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
  const totp = new Authenticator(enroll.body.secret as string);
  const verify = await api.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: await totp.nextCode() }, token);
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return { tenant, totp };
}

describe('changing the issuer', () => {
  it('is refused to an API key, which therefore cannot become the owner through its own provider', async () => {
    const { tenant } = await tenantWithOwnerTotp();
    const key = await apiKey(tenant);
    const body = { ...(await client(tenant, rogue)), issuer: rogue.issuer };
    expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, body, { token: key }), 403, 'FORBIDDEN', 'admin_session_required');
    const stored = await sql<{ idp_issuer: string | null }>('select idp_issuer from tenant where id = ?', [tenant.id]);
    expect(stored[0]?.idp_issuer).toBeNull();
    // the key may still rotate the client of the provider already chosen
    const rotate = await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, await client(tenant, defaultProvider), { token: key });
    expect(rotate.status, JSON.stringify(rotate.body)).toBe(200);
  });

  it('needs a recent sign-in, is audited and mailed to every Admin', async () => {
    const { tenant } = await tenantWithOwnerTotp();
    const second = await signupMember(api, tenant.slug);
    await sql(`update app_user set role = 'Admin' where id = ?`, [second.id]);
    const body = { ...(await client(tenant, rogue)), issuer: rogue.issuer };
    await sql(`update session set authenticated_at = now() - interval '1 hour' where tenant_id = ?`, [tenant.id]);
    expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, body, { token: tenant.accessToken }), 401, 'UNAUTHORIZED', 'reauthentication_required');
    await sql(`update session set authenticated_at = now() where tenant_id = ?`, [tenant.id]);
    const put = await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, body, { token: tenant.accessToken });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const audits = await sql<{ details: Record<string, unknown> }>(
      `select details from audit_event where tenant_id = ? and action = 'IdpOauthLinked' and details->>'issuerChanged' = 'true'`, [tenant.id],
    );
    expect(audits).toHaveLength(1);
    expect(audits[0]?.details).toMatchObject({ previousIssuer: defaultProvider.issuer });
    for (const admin of [tenant.adminEmail, second.email]) {
      const mail = await sink.waitFor(admin, (m) => m.subject.includes('The identity provider was changed'));
      expect(mail.text).toContain(tenant.adminEmail);
    }
  });
});

describe('linking a provider identity to an existing account', () => {
  it('never links a verified account by email: an Admin\'s own provider cannot sign in as the owner', async () => {
    const { tenant } = await tenantWithOwnerTotp();
    // a second Admin (or one holding the owner's lost session) points the tenant at a provider she controls
    const put = await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...(await client(tenant, rogue)), issuer: rogue.issuer }, { token: tenant.accessToken });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const sub = `sub-${unique()}`;
    rogue.setAccount(sub, { email: tenant.adminEmail, email_verified: true, amr: ['pwd', 'otp'] });
    expectError(await signIn(tenant.slug, rogue, sub), 401, 'UNAUTHORIZED', 'idp_link_required');
    expect(await sql('select 1 from idp_identity where tenant_id = ?', [tenant.id])).toHaveLength(0);
  });

  it('links from the owner\'s own signed-in session, to her own address only', async () => {
    const tenant = await createTenant(api, `Link ${unique()}`);
    const put = await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, await client(tenant, defaultProvider), { token: tenant.accessToken });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const member = await signupMember(api, tenant.slug);
    await sql('update app_user set email_verified_at = now() where id = ?', [member.id]);
    const own = `sub-${unique()}`;
    const other = `sub-${unique()}`;
    defaultProvider.setAccount(own, { email: member.email, email_verified: true });
    defaultProvider.setAccount(other, { email: `other-${unique()}@example.com`, email_verified: true });
    expectError(await api.post(`/v1/${tenant.slug}/me/idp/link`, undefined, { token: await apiKey(tenant) }), 401, 'UNAUTHORIZED', 'user_token_required');

    // someone else's provider account cannot be linked to the member (the link CSRF of a victim's identity)
    const wrong = await api.post(`/v1/${tenant.slug}/me/idp/link`, undefined, { token: member.accessToken });
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(200);
    const wrongCallback = await defaultProvider.signIn(wrong.body.authorizationUrl as string, other);
    expectError(await api.get(wrongCallback.pathname + wrongCallback.search), 401, 'UNAUTHORIZED', 'idp_link_email_mismatch');

    const start = await api.post(`/v1/${tenant.slug}/me/idp/link`, undefined, { token: member.accessToken });
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    const callback = await defaultProvider.signIn(start.body.authorizationUrl as string, own);
    const linked = await api.get(callback.pathname + callback.search);
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body.user.id).toBe(member.id);
    const audits = await sql<{ details: Record<string, unknown> }>(
      `select details from audit_event where tenant_id = ? and action = 'IdpOauthLinked' and target_id = ?`, [tenant.id, member.id],
    );
    expect(audits.map((a) => a.details.via)).toEqual(['signed_in_user']);
    // from now on the provider signs her in, and her password still works
    const again = await signIn(tenant.slug, defaultProvider, own);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.user.id).toBe(member.id);
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD })).status).toBe(200);
  });

  it('needs a recent sign-in to start a link', async () => {
    const tenant = await createTenant(api, `Link ${unique()}`);
    await sql(`update session set authenticated_at = now() - interval '1 hour' where tenant_id = ?`, [tenant.id]);
    expectError(await api.post(`/v1/${tenant.slug}/me/idp/link`, undefined, { token: tenant.accessToken }), 401, 'UNAUTHORIZED', 'reauthentication_required');
  });
});

describe('the provider\'s amr and the user\'s own factor', () => {
  it('still asks a linked user\'s own TOTP unless the tenant sets idpMfaTrust', async () => {
    const { tenant, totp } = await tenantWithOwnerTotp();
    const sub = `sub-${unique()}`;
    defaultProvider.setAccount(sub, { email: tenant.adminEmail, email_verified: true });
    const link = await api.post(`/v1/${tenant.slug}/me/idp/link`, undefined, { token: tenant.accessToken });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const first = await defaultProvider.signIn(link.body.authorizationUrl as string, sub);
    // the link itself completes like a sign-in: her own factor is asked
    expectError(await api.get(first.pathname + first.search), 401, 'UNAUTHORIZED', 'mfa_required');
    expect(await sql('select 1 from idp_identity where tenant_id = ?', [tenant.id])).toHaveLength(1);

    defaultProvider.setAccount(sub, { email: tenant.adminEmail, email_verified: true, amr: ['pwd', 'otp'] });
    const refused = await signIn(tenant.slug, defaultProvider, sub);
    expectError(refused, 401, 'UNAUTHORIZED', 'mfa_required');
    const done = await api.post(`/v1/${tenant.slug}/auth/mfa/complete`, { mfaToken: refused.body.details.mfaToken, totpCode: await totp.nextCode() });
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    const patch = await api.patch(`/v1/${tenant.slug}/tenant`, { idpMfaTrust: true }, { token: done.body.accessToken as string });
    expect(patch.status, JSON.stringify(patch.body)).toBe(200);
    expect(patch.body.idpMfaTrust).toBe(true);
    const trusted = await signIn(tenant.slug, defaultProvider, sub);
    expect(trusted.status, JSON.stringify(trusted.body)).toBe(200);
  });
});
