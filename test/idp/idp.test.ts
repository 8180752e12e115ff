import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { freePort, startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { idpClientSecretAssociatedData } from '../../src/services/idp/idp-service.js';

let provider: TestOpenIdProvider;
let server: TestServer;
let api: Api;
/** Every response of the IdP routes seen by the tests, for the "secret never returned" checks. */
const seen: ApiResponse[] = [];
/** Every client secret configured in this file. */
const secretsUsed = new Set<string>();

beforeAll(async () => {
  provider = await startOpenIdProvider();
  const port = await freePort();
  server = await startTestServer({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, IDP_ISSUER: provider.issuer });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
});

async function record<T extends ApiResponse>(res: Promise<T>): Promise<T> {
  const r = await res;
  seen.push(r);
  return r;
}

/** A tenant whose admin configured a client registered at the test provider. */
async function idpTenant(): Promise<TestTenant & { clientId: string; clientSecret: string }> {
  const tenant = await createTenant(api, `Idp ${unique()}`);
  const clientId = `client-${unique()}`;
  const clientSecret = `secret-${unique()}-${unique()}-${unique()}`;
  await provider.addClient(clientId, clientSecret, `${server.url}/v1/${tenant.slug}/oauth/idp/callback`);
  const put = await record(api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId, clientSecret }, { token: tenant.accessToken }));
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  expect(put.body).toEqual({ ok: true });
  secretsUsed.add(clientSecret);
  return { ...tenant, clientId, clientSecret };
}

async function startUrl(slug: string): Promise<string> {
  const res = await record(api.get(`/v1/${slug}/oauth/idp/start`));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.authorizationUrl as string;
}

/** Calls the service's callback exactly as the provider redirected the browser to it. */
function followCallback(callback: URL): Promise<ApiResponse> {
  return record(api.get(callback.pathname + callback.search));
}

/** Raw SQL on the run's database (for state the API does not show: ciphertexts, links, statuses). */
function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

/** A provider account with a fresh subject and a verified email. */
function newAccount(email = `idp-${unique()}@example.com`, emailVerified = true): { sub: string; email: string } {
  const sub = `sub-${unique()}`;
  provider.setAccount(sub, { email, email_verified: emailVerified });
  return { sub, email };
}

/** The whole flow for one provider account; returns the callback response. */
async function signInThroughProvider(slug: string, sub: string): Promise<ApiResponse> {
  const callback = await provider.signIn(await startUrl(slug), sub);
  return followCallback(callback);
}

describe('external identity-provider sign-in', () => {
  it('runs start → provider login → callback and yields a working session', async () => {
    const tenant = await idpTenant();
    const sub = `sub-${unique()}`;
    const email = `Idp-${unique()}@Example.com`;
    provider.setAccount(sub, { email, email_verified: true });

    const authorizationUrl = await startUrl(tenant.slug);
    const url = new URL(authorizationUrl);
    expect(url.origin).toBe(provider.issuer);
    expect(url.searchParams.get('client_id')).toBe(tenant.clientId);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(`${server.url}/v1/${tenant.slug}/oauth/idp/callback`);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();

    const callback = await provider.signIn(authorizationUrl, sub);
    expect(callback.searchParams.get('code')).toBeTruthy();
    const session = await followCallback(callback);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.user).toMatchObject({ email: email.toLowerCase(), role: 'Member', status: 'Active' });
    expect(session.body.accessTokenExpiresIn).toBe(900);
    expect(session.body.refreshTokenExpiresIn).toBe(2592000);

    const me = await record(api.get(`/v1/${tenant.slug}/me`, { token: session.body.accessToken }));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: session.body.user.id, email: email.toLowerCase(), role: 'Member' });
    const refreshed = await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: session.body.refreshToken });
    expect(refreshed.status).toBe(200);

    // The ID token signature was checked against the provider's JWKS.
    expect(provider.requests).toContain('/jwks');
    const audits = await sql<{ action: string; details: Record<string, unknown> }>(
      `select action, details from audit_event where tenant_id = ? and actor_id = ? order by created_at, action`, [tenant.id, session.body.user.id],
    );
    expect(audits.map((a) => a.action).sort()).toEqual(['IdpOauthLinked', 'SessionCreated', 'UserLogin', 'UserSignup']);
    expect(audits.find((a) => a.action === 'UserLogin')!.details).toMatchObject({ method: 'idp', issuer: provider.issuer });
  });

  it('fetches the discovery document once per issuer, not per request', async () => {
    const tenant = await idpTenant();
    await startUrl(tenant.slug);
    await startUrl(tenant.slug);
    expect(provider.requests.filter((p) => p === '/.well-known/openid-configuration')).toHaveLength(1);
  });

  it('signs the same provider subject in as the same user, even after its email changed at the provider', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    const first = await signInThroughProvider(tenant.slug, sub);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    provider.setAccount(sub, { email: `changed-${unique()}@example.com`, email_verified: true });
    const second = await signInThroughProvider(tenant.slug, sub);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.user.id).toBe(first.body.user.id);
    expect(second.body.user.email).toBe(first.body.user.email);
    const logins = await sql<{ details: { method: string } }>(
      `select details from audit_event where tenant_id = ? and action = 'UserLogin' and actor_id = ?`, [tenant.id, first.body.user.id],
    );
    expect(logins.map((l) => l.details.method)).toEqual(['idp', 'idp']);
  });

  it('never links an existing account with a verified email by the email alone (its owner links signed in: idp-link-proof.test.ts)', async () => {
    const tenant = await idpTenant();
    const member = await signupMember(api, tenant.slug);
    // An unverified address is reclaimed instead (account-takeover.test.ts).
    await sql('update app_user set email_verified_at = now() where id = ?', [member.id]);
    const { sub } = newAccount(member.email.toUpperCase());
    const session = await signInThroughProvider(tenant.slug, sub);
    expectError(session, 401, 'UNAUTHORIZED', 'idp_link_required');
    expect(await sql('select 1 from idp_identity where tenant_id = ?', [tenant.id])).toEqual([]);
    const failed = await sql<{ details: Record<string, unknown> }>(
      `select details from audit_event where tenant_id = ? and action = 'UserLoginFailed' and target_id = ?`, [tenant.id, member.id],
    );
    expect(failed.map((f) => f.details.reason)).toEqual(['idp_link_required']);
    // The password still works.
    const login = await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    expect(login.status).toBe(200);
  });

  it('never links by an email the provider has not verified', async () => {
    const tenant = await idpTenant();
    const member = await signupMember(api, tenant.slug);
    const { sub } = newAccount(member.email, false);
    const res = await signInThroughProvider(tenant.slug, sub);
    expectError(res, 401, 'UNAUTHORIZED', 'idp_email_unverified');
    expect(await sql('select 1 from idp_identity where tenant_id = ?', [tenant.id])).toHaveLength(0);
  });

  it('does not revive a soft-deleted user: the same subject becomes a new Member', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    const first = await signInThroughProvider(tenant.slug, sub);
    expect(first.status).toBe(200);
    const deleted = await api.delete(`/v1/${tenant.slug}/me`, { token: first.body.accessToken });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const again = await signInThroughProvider(tenant.slug, sub);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.user.id).not.toBe(first.body.user.id);
    const [old] = await sql<{ deleted_at: Date | null }>('select deleted_at from app_user where id = ?', [first.body.user.id]);
    expect(old!.deleted_at).not.toBeNull();
  });

  it('activates a Pending user whose own email the provider verified', async () => {
    const tenant = await idpTenant();
    const member = await signupMember(api, tenant.slug);
    await sql(`update app_user set status = 'Pending', email_verified_at = null where id = ? and tenant_id = ?`, [member.id, tenant.id]);
    const { sub } = newAccount(member.email);
    const session = await signInThroughProvider(tenant.slug, sub);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.user).toMatchObject({ id: member.id, status: 'Active' });
    const [row] = await sql<{ status: string; email_verified_at: Date | null }>('select status, email_verified_at from app_user where id = ?', [member.id]);
    expect(row!.status).toBe('Active');
    expect(row!.email_verified_at).not.toBeNull();
    expect(await sql(`select 1 from audit_event where tenant_id = ? and action = 'UserEmailVerified' and target_id = ?`, [tenant.id, member.id])).toHaveLength(1);
  });

  it('refuses a suspended user', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    const first = await signInThroughProvider(tenant.slug, sub);
    expect(first.status).toBe(200);
    await sql(`update app_user set status = 'Suspended' where id = ? and tenant_id = ?`, [first.body.user.id, tenant.id]);
    expectError(await signInThroughProvider(tenant.slug, sub), 401, 'UNAUTHORIZED', 'user_suspended');
  });

  it('refuses a replayed state', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    const callback = await provider.signIn(await startUrl(tenant.slug), sub);
    expect((await followCallback(callback)).status).toBe(200);
    const replay = await followCallback(callback);
    expectError(replay, 400, 'BAD_REQUEST', 'state_reused');
  });

  it('reports a provider error (the user cancelled) and spends the state', async () => {
    const tenant = await idpTenant();
    const callback = await provider.abort(await startUrl(tenant.slug));
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const res = await followCallback(callback);
    expectError(res, 401, 'UNAUTHORIZED', 'idp_error');
    expect(res.body.details.error).toBe('access_denied');
    expect(typeof res.body.details.errorDescription).toBe('string');
    const reused = await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?code=x&state=${callback.searchParams.get('state')}`));
    expectError(reused, 400, 'BAD_REQUEST', 'state_reused');
  });

  it('refuses an unknown, missing, expired or foreign state before talking to the provider', async () => {
    const tenant = await idpTenant();
    const other = await idpTenant();
    expectError(await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?code=abc&state=${unique()}`)), 400, 'BAD_REQUEST', 'invalid_state');
    expectError(await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?code=abc`)), 400, 'BAD_REQUEST', 'invalid_state');
    expectError(await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?code=&state=x`)), 400, 'BAD_REQUEST');

    const foreignState = new URL(await startUrl(other.slug)).searchParams.get('state')!;
    expectError(
      await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?code=abc&state=${foreignState}`)), 400, 'BAD_REQUEST', 'invalid_state',
    );

    const state = new URL(await startUrl(tenant.slug)).searchParams.get('state')!;
    await sql(`update idp_auth_request set expires_at = now() - interval '1 second' where tenant_id = ?`, [tenant.id]);
    expectError(await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?code=abc&state=${state}`)), 400, 'BAD_REQUEST', 'state_expired');
  });

  it('answers 400 missing_code when the state is right but no code came', async () => {
    const tenant = await idpTenant();
    const state = new URL(await startUrl(tenant.slug)).searchParams.get('state')!;
    expectError(await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?state=${state}`)), 400, 'BAD_REQUEST', 'missing_code');
  });

  it('answers 401 code_exchange_failed when the provider refuses the client secret', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    await record(api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId: tenant.clientId, clientSecret: 'not-the-registered-secret' }, { token: tenant.accessToken }));
    const res = await signInThroughProvider(tenant.slug, sub);
    expectError(res, 401, 'UNAUTHORIZED', 'code_exchange_failed');
    expect(res.body.details.error).toBe('invalid_client');
  });

  it('answers 401 code_exchange_failed for an authorization code presented twice', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    const callback = await provider.signIn(await startUrl(tenant.slug), sub);
    // A second flow's state with the first flow's code: the provider refuses the spent or foreign code.
    const secondState = new URL(await startUrl(tenant.slug)).searchParams.get('state')!;
    expect((await followCallback(callback)).status).toBe(200);
    const res = await record(api.get(`/v1/${tenant.slug}/oauth/idp/callback?code=${callback.searchParams.get('code')}&state=${secondState}&iss=${encodeURIComponent(provider.issuer)}`));
    expectError(res, 401, 'UNAUTHORIZED', 'code_exchange_failed');
    expect(res.body.details.error).toBe('invalid_grant');
  });

  it('answers 401 issuer_mismatch when the RFC 9207 iss parameter is missing or names another issuer', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    for (const iss of ['http://127.0.0.1:1', undefined]) {
      const callback = await provider.signIn(await startUrl(tenant.slug), sub);
      expect(callback.searchParams.get('iss')).toBe(provider.issuer);
      if (iss === undefined) callback.searchParams.delete('iss');
      else callback.searchParams.set('iss', iss);
      expectError(await followCallback(callback), 401, 'UNAUTHORIZED', 'issuer_mismatch');
    }
    expect(await sql('select 1 from idp_identity where tenant_id = ?', [tenant.id])).toHaveLength(0);
  });

  it('answers 401 id_token_invalid when the ID token nonce is not the one of the request', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    const authorizationUrl = await startUrl(tenant.slug);
    const [row] = await sql<{ id: string; secrets_enc: string }>('select id, secrets_enc from idp_auth_request where tenant_id = ?', [tenant.id]);
    const associatedData = `idp-auth-request:${tenant.id}:${row!.id}`;
    const { keyring } = server.services;
    const stored = JSON.parse(keyring.decrypt(row!.secrets_enc, associatedData)) as { codeVerifier: string; nonce: string };
    expect(stored.nonce).toBe(new URL(authorizationUrl).searchParams.get('nonce'));
    // Same PKCE verifier (the provider accepts the code), another expected nonce (the ID token must be refused).
    const tampered = keyring.encrypt(JSON.stringify({ ...stored, nonce: 'a-nonce-of-another-request' }), associatedData);
    await sql('update idp_auth_request set secrets_enc = ? where id = ?', [tampered, row!.id]);
    const res = await followCallback(await provider.signIn(authorizationUrl, sub));
    expectError(res, 401, 'UNAUTHORIZED', 'id_token_invalid');
    expect(await sql('select 1 from idp_identity where tenant_id = ?', [tenant.id])).toHaveLength(0);
  });

  it('answers 400 idp_not_configured at start and callback without credentials, and after DELETE', async () => {
    const tenant = await createTenant(api, `Idp none ${unique()}`);
    expectError(await record(api.get(`/v1/${tenant.slug}/oauth/idp/start`)), 400, 'BAD_REQUEST', 'idp_not_configured');
    const configured = await idpTenant();
    const state = new URL(await startUrl(configured.slug)).searchParams.get('state')!;
    const del = await record(api.delete(`/v1/${configured.slug}/oauth/idp/credentials`, { token: configured.accessToken }));
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ ok: true });
    expectError(await record(api.get(`/v1/${configured.slug}/oauth/idp/start`)), 400, 'BAD_REQUEST', 'idp_not_configured');
    // The pending flow ended with the credentials.
    expectError(await record(api.get(`/v1/${configured.slug}/oauth/idp/callback?code=abc&state=${state}`)), 400, 'BAD_REQUEST', 'invalid_state');
    const [row] = await sql<{ idp_client_id: string | null; idp_client_secret_enc: string | null }>(
      'select idp_client_id, idp_client_secret_enc from tenant where id = ?', [configured.id],
    );
    expect(row).toEqual({ idp_client_id: null, idp_client_secret_enc: null });
    const audits = await sql<{ action: string; details: Record<string, unknown> }>(
      `select action, details from audit_event where tenant_id = ? and action in ('IdpOauthLinked', 'IdpOauthUnlinked') order by created_at`, [configured.id],
    );
    expect(audits.map((a) => a.action)).toEqual(['IdpOauthLinked', 'IdpOauthUnlinked']);
    expect(audits[0]!.details.clientId).toBe(configured.clientId);
    // DELETE again: still ok, nothing more audited.
    expect((await api.delete(`/v1/${configured.slug}/oauth/idp/credentials`, { token: configured.accessToken })).status).toBe(200);
    expect(await sql(`select 1 from audit_event where tenant_id = ? and action = 'IdpOauthUnlinked'`, [configured.id])).toHaveLength(1);
  });

  it('describes the four routes in the OpenAPI document', async () => {
    const doc = (await api.get('/v1/openapi.json')).body;
    const base = '/v1/{tenantSlug}/oauth/idp';
    expect(Object.keys(doc.paths[`${base}/start`])).toContain('get');
    expect(Object.keys(doc.paths[`${base}/credentials`]).sort()).toEqual(expect.arrayContaining(['delete', 'put']));
    const query = (doc.paths[`${base}/callback`].get.parameters as { name: string; in: string }[]).filter((p) => p.in === 'query').map((p) => p.name);
    expect(query).toEqual(expect.arrayContaining(['code', 'state', 'error', 'error_description']));
  });

  it('is 404 for an unknown tenant', async () => {
    expectError(await api.get(`/v1/no-such-${unique()}/oauth/idp/start`), 404, 'NOT_FOUND');
    expectError(await api.get(`/v1/no-such-${unique()}/oauth/idp/callback?code=a&state=b`), 404, 'NOT_FOUND');
  });
});

describe('oauth/idp/credentials', () => {
  it('needs an admin: 401 without a credential, 403 for a Member, 400 for a bad body', async () => {
    const tenant = await createTenant(api, `Idp creds ${unique()}`);
    const member = await signupMember(api, tenant.slug);
    const body = { clientId: 'id', clientSecret: 'secret' };
    expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, body), 401, 'UNAUTHORIZED');
    expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, body, { token: member.accessToken }), 403, 'FORBIDDEN');
    expectError(await api.delete(`/v1/${tenant.slug}/oauth/idp/credentials`, { token: member.accessToken }), 403, 'FORBIDDEN');
    for (const bad of [{ clientId: '', clientSecret: 's' }, { clientId: 'i', clientSecret: '' }, { clientId: 'i'.repeat(513), clientSecret: 's' },
      { clientId: 'i', clientSecret: 's'.repeat(513) }, { clientId: 'i' }]) {
      expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, bad, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    }
    const longest = await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId: 'i'.repeat(512), clientSecret: 's'.repeat(512) }, { token: tenant.accessToken });
    expect(longest.status).toBe(200);
  });

  it('stores the secret only as keyring ciphertext bound to the tenant', async () => {
    const tenant = await idpTenant();
    const [row] = await sql<{ idp_client_id: string; idp_client_secret_enc: string }>(
      'select idp_client_id, idp_client_secret_enc from tenant where id = ?', [tenant.id],
    );
    expect(row!.idp_client_id).toBe(tenant.clientId);
    expect(row!.idp_client_secret_enc).not.toContain(tenant.clientSecret);
    expect(row!.idp_client_secret_enc.startsWith('v1:')).toBe(true);
    expect(server.services.keyring.decrypt(row!.idp_client_secret_enc, idpClientSecretAssociatedData(tenant.id))).toBe(tenant.clientSecret);
    expect(() => server.services.keyring.decrypt(row!.idp_client_secret_enc, idpClientSecretAssociatedData(crypto.randomUUID()))).toThrow();
  });

  it('never returns or logs the client secret (this flow and every response of the tests above)', async () => {
    const tenant = await idpTenant();
    const { sub } = newAccount();
    const session = await signInThroughProvider(tenant.slug, sub);
    expect(session.status).toBe(200);
    expect((await record(api.get(`/v1/${tenant.slug}/me`, { token: session.body.accessToken }))).status).toBe(200);
    const secrets = [...secretsUsed];
    for (const res of seen) {
      const text = JSON.stringify(res.body) + JSON.stringify([...res.headers]);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    const logs = server.logs.join('\n');
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});

describe('an identity provider that is unreachable at first', () => {
  it('answers 400 idp_unavailable, then recovers once the provider is up', async () => {
    const port = await freePort();
    const lateServer = await startTestServer({ IDP_ISSUER: `http://127.0.0.1:${port}` });
    const lateApi = new Api(lateServer.url);
    let late: TestOpenIdProvider | undefined;
    try {
      const tenant = await createTenant(lateApi, `Idp late ${unique()}`);
      const put = await lateApi.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId: 'late', clientSecret: 'late-secret' }, { token: tenant.accessToken });
      expect(put.status).toBe(200);
      expectError(await lateApi.get(`/v1/${tenant.slug}/oauth/idp/start`), 400, 'BAD_REQUEST', 'idp_unavailable');
      late = await startOpenIdProvider(port);
      const res = await lateApi.get(`/v1/${tenant.slug}/oauth/idp/start`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(new URL(res.body.authorizationUrl).origin).toBe(late.issuer);
    } finally {
      await lateServer.close();
      await late?.close();
    }
  });
});

describe('IDP_ISSUER', () => {
  it('must be https, or http on a loopback host only', () => {
    const base = { DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(48), ENCRYPTION_KEYS: `v1:${Buffer.alloc(32, 1).toString('base64')}` };
    expect(loadConfig({ ...base }).idpIssuer).toBe('https://accounts.google.com');
    for (const ok of ['https://idp.example.com', 'http://127.0.0.1:9000', 'http://localhost:9000', 'http://[::1]:9000']) {
      expect(loadConfig({ ...base, IDP_ISSUER: ok }).idpIssuer).toBe(ok);
    }
    for (const bad of ['http://idp.example.com', 'http://10.0.0.1', 'ftp://127.0.0.1']) {
      expect(() => loadConfig({ ...base, IDP_ISSUER: bad })).toThrow(ConfigError);
    }
  });
});

/** A POST to the `/trpc` endpoint as the hosted pages send it (cookie transport), with the browser's cookies. */
async function trpcCall(path: string, input: unknown, cookie?: string) {
  const res = await fetch(`${server.url}/trpc/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as { result?: { data: Record<string, unknown> }; error?: { data: { details: Record<string, unknown> } } };
  return { status: res.status, body, setCookie: res.headers.getSetCookie() };
}

/** A browser starting a provider sign-in from the page: the provider URL and its `idp_binding_{slug}=…` cookie. */
async function startInBrowser(slug: string): Promise<{ authorizationUrl: string; cookie: string; header: string }> {
  const started = await trpcCall('browser.idpStart', { tenantSlug: slug });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const header = started.setCookie.find((c) => c.startsWith(`idp_binding_${slug}=`));
  expect(header, JSON.stringify(started.setCookie)).toBeDefined();
  return { authorizationUrl: started.body.result!.data.authorizationUrl as string, cookie: header!.split(';')[0]!, header: header! };
}

describe('provider sign-in started from the hosted pages (bound to the browser)', () => {
  it('tells the sign-in page whether the provider is configured, the workspace\'s name and sign-up rules, and nothing more', async () => {
    const name = `Plain ${unique()}`;
    const plain = await createTenant(api, name);
    expect((await api.get(`/v1/${plain.slug}/sign-in-options`)).body).toEqual({
      idpSignIn: false, workspaceName: name, defaultLocale: 'en',
      branding: { displayName: name, logoUrl: null, darkLogoUrl: null, brandDisplay: 'LogoAndName', primaryColor: null, supportUrl: null },
      signupPolicy: 'Open', signupEmailDomains: [], passwordMinLength: 12, enterpriseSso: false,
    });
    const tenant = await idpTenant();
    const options = await record(api.get(`/v1/${tenant.slug}/sign-in-options`));
    expect(options.status).toBe(200);
    expect(options.body).toEqual({
      idpSignIn: true, workspaceName: expect.any(String), defaultLocale: 'en', branding: expect.any(Object),
      signupPolicy: 'Open', signupEmailDomains: [], passwordMinLength: 12, enterpriseSso: false,
    });
  });

  it('sets an HttpOnly SameSite=Lax binding cookie and stores only its hash', async () => {
    const tenant = await idpTenant();
    const { authorizationUrl, cookie, header } = await startInBrowser(tenant.slug);
    expect(header).toMatch(/; HttpOnly/i);
    expect(header).toMatch(/; SameSite=Lax/i);
    expect(header).toMatch(/; Path=\/(;|$)/);
    expect(header).toMatch(/; Max-Age=600/i);
    const value = cookie.split('=')[1]!;
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    const rows = await sql<{ browser_binding_hash: string }>('select browser_binding_hash from idp_auth_request where tenant_id = ? and state_hash = ?', [
      tenant.id, createHash('sha256').update(state).digest('hex'),
    ]);
    expect(rows[0]!.browser_binding_hash).toBe(createHash('sha256').update(value).digest('hex'));
    // REST starts stay unbound
    await startUrl(tenant.slug);
    expect(await sql(`select 1 from idp_auth_request where tenant_id = ? and browser_binding_hash is null`, [tenant.id])).toHaveLength(1);
  });

  it('sends the browser holding the cookie from the redirect URI to the page, with the parameters in the fragment', async () => {
    const tenant = await idpTenant();
    const account = newAccount();
    const { authorizationUrl, cookie } = await startInBrowser(tenant.slug);
    const callback = await provider.signIn(authorizationUrl, account.sub);
    const redirected = await fetch(`${server.url}${callback.pathname}${callback.search}`, { headers: { cookie }, redirect: 'manual' });
    expect(redirected.status).toBe(303);
    const location = new URL(redirected.headers.get('location')!, server.url);
    expect(location.pathname).toBe(`/app/${tenant.slug}/idp-callback`);
    expect(location.search).toBe('');
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get('code')).toBe(callback.searchParams.get('code'));
    expect(fragment.get('state')).toBe(callback.searchParams.get('state'));

    const session = await trpcCall('browser.idpCallback', { tenantSlug: tenant.slug, code: fragment.get('code'), state: fragment.get('state'), iss: fragment.get('iss') }, cookie);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.result!.data).not.toHaveProperty('refreshToken');
    expect((session.body.result!.data.user as { email: string }).email).toBe(account.email);
    expect(session.setCookie.some((c) => c.startsWith(`refresh_${tenant.slug}=`) && /HttpOnly/i.test(c))).toBe(true);
    expect(session.setCookie.some((c) => c.startsWith(`idp_binding_${tenant.slug}=;`))).toBe(true); // binding cookie deleted
  });

  it('refuses a state started in another browser (other cookie, or none) with 401 browser_mismatch, and spends it', async () => {
    const tenant = await idpTenant();
    const account = newAccount();
    const victim = await startInBrowser(tenant.slug);
    const attacker = await startInBrowser(tenant.slug);
    const callback = await provider.signIn(victim.authorizationUrl, account.sub);
    const params = { tenantSlug: tenant.slug, code: callback.searchParams.get('code'), state: callback.searchParams.get('state'), iss: callback.searchParams.get('iss') };

    const other = await trpcCall('browser.idpCallback', params, attacker.cookie);
    expect(other.status).toBe(401);
    expect(other.body.error!.data.details.reason).toBe('browser_mismatch');
    const retried = await trpcCall('browser.idpCallback', params, victim.cookie);
    expect(retried.status).toBe(400);
    expect(retried.body.error!.data.details.reason).toBe('state_reused');

    // without any cookie, on /trpc or through the registered redirect URI as an API client would
    const second = await startInBrowser(tenant.slug);
    const secondCallback = await provider.signIn(second.authorizationUrl, account.sub);
    const noCookie = await followCallback(secondCallback);
    expectError(noCookie, 401, 'UNAUTHORIZED');
    expect(noCookie.body.details.reason).toBe('browser_mismatch');
    const third = await startInBrowser(tenant.slug);
    const thirdCallback = await provider.signIn(third.authorizationUrl, account.sub);
    const bare = await trpcCall('browser.idpCallback', { tenantSlug: tenant.slug, code: thirdCallback.searchParams.get('code'), state: thirdCallback.searchParams.get('state') });
    expect(bare.status).toBe(401);
    expect(bare.body.error!.data.details.reason).toBe('browser_mismatch');
    expect(await sql(`select 1 from idp_identity where tenant_id = ?`, [tenant.id])).toHaveLength(0);

    // API clients' flows (no binding) keep working without any cookie
    expect((await signInThroughProvider(tenant.slug, account.sub)).status).toBe(200);
  });

  it('refuses on the hosted page a flow no browser started (login CSRF with an attacker\'s own code and state)', async () => {
    const tenant = await idpTenant();
    const attackerAccount = newAccount();
    // the attacker starts an API-client flow, signs in at the provider as himself and keeps the callback
    const callback = await provider.signIn(await startUrl(tenant.slug), attackerAccount.sub);
    const params = { tenantSlug: tenant.slug, code: callback.searchParams.get('code'), state: callback.searchParams.get('state'), iss: callback.searchParams.get('iss') };
    // the victim's browser, holding its own binding cookie of another flow, is sent to /app/{slug}/idp-callback#code=…&state=…
    const victim = await startInBrowser(tenant.slug);
    const planted = await trpcCall('browser.idpCallback', params, victim.cookie);
    expect(planted.status, JSON.stringify(planted.body)).toBe(401);
    expect(planted.body.error!.data.details.reason).toBe('browser_mismatch');
    expect(planted.setCookie.some((c) => c.startsWith(`refresh_${tenant.slug}=`) && !c.startsWith(`refresh_${tenant.slug}=;`))).toBe(false);
    const bare = await trpcCall('browser.idpCallback', params);
    expect(bare.status).toBe(400);
    expect(bare.body.error!.data.details.reason).toBe('state_reused');
  });
});
