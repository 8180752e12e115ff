import path from 'node:path';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { axeBothThemes, buildAndLaunchChromium, DESKTOP, fitsPhone, hasChromium, SCREENSHOTS } from '../helpers/browser.js';
import { createTenant, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { registerRelyingParty, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * The organization picker in Chromium (docs/oidc.md "Organization picker", docs/web.md): an
 * application asks for scope `organizations`; a person in two organizations signs in on the hosted
 * page, picks one, and the application's ID token (openid-client) names it; in German the page
 * speaks German; a person in one organization goes straight back; axe in both themes, 360 px.
 */
if (!hasChromium) console.warn('organization-picker-e2e: skipped, Chromium is missing (.ci/run installs it)');

const suite = useTestServerAtPublicUrl();

describe.skipIf(!hasChromium)('organization picker (hosted pages)', () => {
  let browser: Browser;
  let tenant: TestTenant;
  let rp: RelyingParty;
  let acme: string;
  let globex: string;
  const pageErrors: string[] = [];

  async function post(pathName: string, body: Record<string, unknown>) {
    const res = await suite.api.post(`/v1/${tenant.slug}/${pathName}`, body, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  /** A fresh browser page whose requests to the application's redirect URI are answered here and remembered. */
  async function applicationPage(locale = 'en-US'): Promise<{ page: Page; callback: () => URL | undefined }> {
    const context = await browser.newContext({ viewport: DESKTOP, locale });
    const page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    let arrived: URL | undefined;
    await page.route(`${new URL(rp.redirectUri).origin}/**`, async (route) => {
      arrived = new URL(route.request().url());
      await route.fulfill({ contentType: 'text/html', body: '<!doctype html><html lang="en"><title>App</title><h1>Back at the application</h1></html>' });
    });
    onTestFailed(async () => {
      await page.screenshot({ path: path.join(SCREENSHOTS, 'failed-organization-picker.png'), fullPage: true }).catch(() => undefined);
      console.error(`browser errors:\n${pageErrors.join('\n')}\npage: ${page.url()}`);
    });
    return { page, callback: () => arrived };
  }

  /** Starts the application's sign-in (authorization code + PKCE, scope `organizations`) in `page` and signs in as `email`. */
  async function signInFromApplication(page: Page, email: string): Promise<{ verifier: string; state: string; nonce: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: rp.redirectUri, scope: 'openid email organizations', state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    await page.goto(url.href);
    await page.getByLabel(/^(Email|E-Mail-Adresse)$/).fill(email);
    await page.getByLabel(/^(Password|Passwort)$/).fill(PASSWORD);
    await page.getByRole('button', { name: /^(Sign in|Anmelden)$/ }).click();
    return { verifier, state, nonce };
  }

  async function exchange(callback: URL, checks: { verifier: string; state: string; nonce: string }) {
    return oidc.authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: checks.verifier, expectedState: checks.state, expectedNonce: checks.nonce });
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    tenant = await createTenant(suite.api);
    await post('organization-roles', { name: 'owner', permissions: ['manage:members'] });
    await post('organization-roles', { name: 'billing', permissions: ['read:invoices'] });
    acme = (await post('organizations', { name: 'Acme' })).organization.id;
    globex = (await post('organizations', { name: 'Globex' })).organization.id;
    rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('lets a person in two organizations pick one; the ID token names it', async () => {
    const person = await signupMember(suite.api, tenant.slug);
    await post(`organizations/${acme}/members`, { userId: person.id, roles: ['owner'] });
    await post(`organizations/${globex}/members`, { userId: person.id, roles: ['billing'] });
    const { page, callback } = await applicationPage();
    const checks = await signInFromApplication(page, person.email);

    await page.getByRole('heading', { name: 'Choose an organization', level: 1 }).waitFor();
    await page.getByText('Continue to App web as a member of:').waitFor();
    const choices = page.getByRole('list', { name: 'Your organizations' });
    expect(await choices.getByRole('button').allTextContents()).toEqual(['Acme', 'Globex']);
    await choices.getByText('Your roles: billing').waitFor();
    expect(await axeBothThemes(page, 'organization picker')).toEqual([]);
    await fitsPhone(page, 'organization-picker');

    await choices.getByRole('button', { name: 'Globex' }).click();
    await page.getByRole('heading', { name: 'Back at the application' }).waitFor();
    const tokens = await exchange(callback()!, checks);
    expect(tokens.claims()).toMatchObject({ sub: person.id, organization_id: globex });
    await page.context().close();
  }, 60_000);

  it('speaks German, and goes straight back for a person in one organization', async () => {
    const person = await signupMember(suite.api, tenant.slug);
    await post(`organizations/${acme}/members`, { userId: person.id, roles: [] });
    await post(`organizations/${globex}/members`, { userId: person.id, roles: ['owner'] });
    const german = await applicationPage('de-DE');
    await signInFromApplication(german.page, person.email);
    await german.page.getByRole('heading', { name: 'Organisation wählen', level: 1 }).waitFor();
    const choices = german.page.getByRole('list', { name: 'Ihre Organisationen' });
    await choices.getByText('Keine Rollen').waitFor();
    await choices.getByText('Ihre Rollen: owner').waitFor();
    await german.page.context().close();

    const single = await signupMember(suite.api, tenant.slug);
    await post(`organizations/${acme}/members`, { userId: single.id, roles: ['owner'] });
    const { page, callback } = await applicationPage();
    const checks = await signInFromApplication(page, single.email);
    await page.getByRole('heading', { name: 'Back at the application' }).waitFor();
    expect((await exchange(callback()!, checks)).claims()).toMatchObject({ sub: single.id, organization_id: acme });
    await page.context().close();
  }, 60_000);
});
