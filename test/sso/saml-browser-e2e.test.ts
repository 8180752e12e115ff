import path from 'node:path';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { buildAndLaunchChromium, hasChromium, SCREENSHOTS } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, createTenant, unique, type TestTenant } from '../helpers/api.js';
import { freePort } from '../helpers/oidc-provider.js';
import { registerRelyingParty } from '../helpers/oidc-relying-party.js';
import { forgingIdp } from '../helpers/saml-forge.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasSimpleSamlPhp, startSimpleSamlIdp, type SimpleSamlIdp } from '../support/simplesamlphp.js';

/**
 * Enterprise single sign-on in a real browser (docs/sso.md): the hosted sign-in page sends an address
 * of a connection's domain to SimpleSAMLphp's login form, and the person comes back signed in, on the
 * account page and inside an application's OpenID Connect sign-in.
 */
const ready = hasChromium && hasSimpleSamlPhp();
if (!ready) console.warn('saml-browser-e2e: skipped, Chromium or SimpleSAMLphp is missing (.ci/run installs both)');

describe.skipIf(!ready)('enterprise SSO in a browser', () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let idp: SimpleSamlIdp;
  let domain: string;
  const pages: Page[] = [];
  const alice = { username: 'alice', password: 'alice password', email: '' };

  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await Promise.all(pages.map((p, i) => p.screenshot({ path: path.join(SCREENSHOTS, `failed-sso-${name}-${i}.png`), fullPage: true }).catch(() => undefined)));
      console.error(`pages: ${pages.map((p) => p.url()).join(', ')}`);
    });
  }

  async function newPerson(): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    pages.push(page);
    return page;
  }

  /** The person types their work address on the hosted page, then their password at the company's IdP. */
  async function signInThroughCompany(person: Page): Promise<void> {
    await person.getByText('If your company signs you in, leave the password empty').waitFor();
    await person.getByLabel('Email').fill(alice.email);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.waitForURL(`${idp.baseUrl}**`);
    await person.locator('input[name="username"]').fill(alice.username);
    await person.locator('input[name="password"]').fill(alice.password);
    await person.locator('form').filter({ has: person.locator('input[name="password"]') }).locator('[type="submit"]').first().click();
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    const port = await freePort();
    server = await startTestServer({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    api = new Api(server.url);
    tenant = await createTenant(api);
    domain = `corp-${unique()}.example`;
    alice.email = `alice@${domain}`;
    const placeholder = forgingIdp();
    const created = await api.post(`/v1/${tenant.slug}/sso-connections`, {
      name: 'Corp', protocol: 'saml', domains: [domain], saml: { entityId: placeholder.entityId, ssoUrl: placeholder.ssoUrl, certificate: placeholder.certificatePem },
    }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const sp = created.body.connection.sp as { entityId: string; acsUrl: string };
    idp = await startSimpleSamlIdp({ sp: [sp], users: [alice] });
    const updated = await api.patch(`/v1/${tenant.slug}/sso-connections/${created.body.connection.id}`, { saml: { metadataXml: idp.metadataXml } }, { token: tenant.accessToken });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await idp?.stop();
  });

  it('hosted page → work address → the IdP\'s login form → back on the account page, signed in', async () => {
    diagnoseOnFailure('account');
    const person = await newPerson();
    await person.goto(`${server.url.replace('localhost', '127.0.0.1')}/app/${tenant.slug}/sign-in`);
    await signInThroughCompany(person);
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor({ timeout: 30_000 });
    expect(await person.getByText(alice.email).count()).toBeGreaterThan(0);
  });

  it('the same inside an application\'s OpenID Connect sign-in: the application gets its code', async () => {
    diagnoseOnFailure('application');
    const rp = await registerRelyingParty(api, tenant, new URL(server.url).origin.replace('localhost', '127.0.0.1'), 'spa', {
      redirectUris: [`http://localhost:${await freePort()}/callback`],
    });
    const person = await newPerson();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: rp.redirectUri, scope: 'openid email', state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    let callback: URL | undefined;
    await person.route(`${rp.redirectUri}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>App</title><h1>Back in the app</h1>' });
    });
    await person.goto(url.href);
    await person.getByText('Sign in to continue to').waitFor();
    await signInThroughCompany(person);
    await person.getByRole('heading', { name: 'Back in the app' }).waitFor({ timeout: 30_000 });
    const tokens = await oidc.authorizationCodeGrant(rp.config, callback!, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    expect(await oidc.fetchUserInfo(rp.config, tokens.access_token, tokens.claims()!.sub)).toMatchObject({ email: alice.email, email_verified: true });
  });
});
