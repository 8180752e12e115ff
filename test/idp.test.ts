import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from './helpers/api.js';
import { freePort, startOpenIdProvider, type TestOpenIdProvider } from './helpers/oidc-provider.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let provider: TestOpenIdProvider;
let server: TestServer;
let api: Api;
/** Every response of the IdP routes seen by the tests, for the "secret never returned" checks. */
const seen: ApiResponse[] = [];

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
  });
});
