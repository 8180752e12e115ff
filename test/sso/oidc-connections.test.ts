import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, unique, type TestTenant } from '../helpers/api.js';
import { startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';
import { setMfaPolicy } from '../helpers/tenant-settings.js';

/**
 * OpenID Connect enterprise connections (docs/sso.md "OpenID Connect connections") against a real
 * OpenID provider (node-oidc-provider): domain routing, the code flow with PKCE, the browser-bound
 * completion, the provider's verified address, and `amr` for the workspace's MFA policy.
 */
const suite = useTestServerAtPublicUrl({ IDP_ALLOW_PRIVATE_ISSUERS: 'true' });
let provider: TestOpenIdProvider;

beforeAll(async () => {
  provider = await startOpenIdProvider();
});
afterAll(async () => {
  await provider?.close();
});

type OidcConnection = { id: string; protocol: string; oidc: { issuer: string; clientId: string }; sp: { redirectUri: string } };

async function createConnection(tenant: TestTenant) {
  const domain = `oidc-${unique()}.example`;
  const clientId = `client-${unique()}`;
  const res = await suite.api.post(`/v1/${tenant.slug}/sso-connections`, {
    name: 'Corp OIDC', protocol: 'oidc', domains: [domain], oidc: { issuer: provider.issuer, clientId, clientSecret: 'client secret value' },
  }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const connection = res.body.connection as OidcConnection;
  await provider.addClient(clientId, 'client secret value', connection.sp.redirectUri);
  return { connection, domain };
}

/** A browser's whole trip: `sso/start`, the provider's login, the callback, the completion with the cookie. */
async function signIn(tenant: TestTenant, email: string, sub: string) {
  const started = await fetch(`${suite.server.url}/v1/${tenant.slug}/sso/start`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }),
  });
  expect(started.status).toBe(200);
  const cookie = started.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const { redirectUrl } = (await started.json()) as { redirectUrl: string };
  expect(redirectUrl.startsWith(provider.issuer)).toBe(true);
  const callback = await provider.signIn(redirectUrl, sub);
  const returned = await fetch(callback, { redirect: 'manual' });
  expect(returned.status).toBe(303);
  const location = returned.headers.get('location') ?? '';
  const fragment = new URLSearchParams(location.slice(location.indexOf('#') + 1));
  return { callback, fragment, cookie, location };
}

async function complete(tenant: TestTenant, code: string, cookie: string) {
  const res = await fetch(`${suite.server.url}/trpc/browser.ssoComplete`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie', cookie },
    body: JSON.stringify({ tenantSlug: tenant.slug, code }),
  });
  return { status: res.status, body: (await res.json()) as { result?: { data: { user: { id: string; email: string } } }; error?: { data?: { details?: { reason?: string } } } } };
}

describe('OpenID Connect connections', () => {
  it('are created with a discovered issuer, show the redirect URI and never the secret; the protocol cannot change', async () => {
    const tenant = await createTenant(suite.api);
    const { connection } = await createConnection(tenant);
    expect(connection).toMatchObject({ protocol: 'oidc', oidc: { issuer: provider.issuer }, saml: null });
    expect(connection.sp.redirectUri).toBe(`${suite.publicUrl}/v1/${tenant.slug}/sso/${connection.id}/oidc/callback`);
    expect(JSON.stringify(connection)).not.toContain('client secret value');
    expectError(await suite.api.patch(`/v1/${tenant.slug}/sso-connections/${connection.id}`, {
      saml: { entityId: 'x', ssoUrl: 'https://idp.example.test/sso', certificate: 'x' },
    }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'sso_protocol_mismatch');
    expectError(await suite.api.post(`/v1/${tenant.slug}/sso-connections`, {
      name: 'No provider', protocol: 'oidc', domains: [`x-${unique()}.example`],
    }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    expectError(await suite.api.post(`/v1/${tenant.slug}/sso-connections`, {
      name: 'Bad issuer', protocol: 'oidc', domains: [`x-${unique()}.example`], oidc: { issuer: 'ftp://issuer.example', clientId: 'c', clientSecret: 's' },
    }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'invalid_issuer');
    // a new client secret replaces the stored one; leaving it out keeps it
    const kept = await suite.api.patch(`/v1/${tenant.slug}/sso-connections/${connection.id}`, { oidc: { issuer: provider.issuer, clientId: connection.oidc.clientId } }, { token: tenant.accessToken });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
  });

  it('signs a person in at the company\'s provider: new user with the verified address; the same user next time; the callback works once', async () => {
    const tenant = await createTenant(suite.api);
    const { domain } = await createConnection(tenant);
    const sub = `sub-${unique()}`;
    const email = `dana@${domain}`;
    provider.setAccount(sub, { email, email_verified: true });
    const first = await signIn(tenant, email, sub);
    expect(first.location.startsWith(`/app/${tenant.slug}/sso-callback#code=`)).toBe(true);
    const done = await complete(tenant, first.fragment.get('code')!, first.cookie);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.result!.data.user.email).toBe(email);
    // the provider's answer is spent: replaying the callback answers no request
    const replay = await fetch(first.callback, { redirect: 'manual' });
    expect(replay.headers.get('location')).toBe(`/app/${tenant.slug}/sso-callback#error=sso_request_unknown`);

    const second = await signIn(tenant, email, sub);
    expect((await complete(tenant, second.fragment.get('code')!, second.cookie)).body.result!.data.user.id).toBe(done.body.result!.data.user.id);
  });

  it('refuses an address the provider did not verify, and one outside the connection\'s domains, audited', async () => {
    const tenant = await createTenant(suite.api);
    const { domain } = await createConnection(tenant);
    const unverified = `sub-${unique()}`;
    provider.setAccount(unverified, { email: `eve@${domain}`, email_verified: false });
    expect((await signIn(tenant, `eve@${domain}`, unverified)).fragment.get('error')).toBe('idp_email_unverified');
    const elsewhere = `sub-${unique()}`;
    provider.setAccount(elsewhere, { email: 'eve@elsewhere.example', email_verified: true });
    expect((await signIn(tenant, `eve@${domain}`, elsewhere)).fragment.get('error')).toBe('sso_email_domain_mismatch');
    const failures = (await suite.api.get(`/v1/${tenant.slug}/audit?action=UserLoginFailed`, { token: tenant.accessToken })).body.items as { details: { reason: string } }[];
    expect(failures.map((event) => event.details.reason)).toEqual(expect.arrayContaining(['idp_email_unverified', 'sso_email_domain_mismatch']));
  });

  it('under a Required MFA policy asks for a second factor, unless the ID token\'s amr shows the provider did multi-factor authentication', async () => {
    const tenant = await createTenant(suite.api);
    const { domain } = await createConnection(tenant);
    await setMfaPolicy(suite.server, tenant.slug, 'Required');
    const plain = `sub-${unique()}`;
    provider.setAccount(plain, { email: `pat@${domain}`, email_verified: true });
    const withoutMfa = await signIn(tenant, `pat@${domain}`, plain);
    expect((await complete(tenant, withoutMfa.fragment.get('code')!, withoutMfa.cookie)).body.error?.data?.details?.reason).toBe('mfa_required');
    const strong = `sub-${unique()}`;
    provider.setAccount(strong, { email: `sam@${domain}`, email_verified: true, amr: ['pwd', 'otp'] });
    const withMfa = await signIn(tenant, `sam@${domain}`, strong);
    const done = await complete(tenant, withMfa.fragment.get('code')!, withMfa.cookie);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  });
});
