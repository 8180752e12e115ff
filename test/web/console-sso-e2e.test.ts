import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { axeBothThemes, buildAndLaunchChromium, DESKTOP, fitsPhone, hasChromium, SCREENSHOTS } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, createTenant, PASSWORD, unique, type TestTenant } from '../helpers/api.js';
import { freePort } from '../helpers/oidc-provider.js';
import { forgingIdp } from '../helpers/saml-forge.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasSimpleSamlPhp, startSimpleSamlIdp, type SimpleSamlIdp } from '../support/simplesamlphp.js';

/**
 * The console's Enterprise SSO pages (docs/sso.md, docs/web.md "Console") in Chromium against the real
 * service: the empty state, a connection created from the guided setup, the values to enter at the
 * provider, a taken domain, and "Test this connection" through SimpleSAMLphp's login form; axe in both
 * themes, nothing sideways at 360 px.
 */
const ready = hasChromium && hasSimpleSamlPhp();
if (!ready) console.warn('console-sso-e2e: skipped, Chromium or SimpleSAMLphp is missing (.ci/run installs both)');

describe.skipIf(!ready)('console pages for enterprise SSO', () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let admin: Page;
  let idp: SimpleSamlIdp | undefined;
  const pageErrors: string[] = [];

  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await admin?.screenshot({ path: path.join(SCREENSHOTS, `failed-console-sso-${name}.png`), fullPage: true }).catch(() => undefined);
      console.error(`browser errors:\n${pageErrors.join('\n')}\npage: ${admin?.url()}`);
    });
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    const port = await freePort();
    server = await startTestServer({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    api = new Api(server.url);
    tenant = await createTenant(api);
    admin = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    admin.on('pageerror', (err) => pageErrors.push(`${admin.url()}: ${err.message}`));
    admin.on('dialog', (dialog) => void dialog.accept());
    await admin.goto(`http://127.0.0.1:${port}/app/${tenant.slug}/sign-in`);
    await admin.getByLabel('Email').fill(tenant.adminEmail);
    await admin.getByLabel('Password').fill(PASSWORD);
    await admin.getByRole('button', { name: 'Sign in' }).click();
    await admin.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await idp?.stop();
  });

  it('creates a connection from the guided setup, shows what to enter at the provider, refuses a taken domain, and tests it at SimpleSAMLphp', async () => {
    diagnoseOnFailure('connection');
    const origin = new URL(admin.url()).origin;
    await admin.goto(`${origin}/app/${tenant.slug}/admin`);
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Enterprise SSO' }).click();
    await admin.getByRole('heading', { name: 'Enterprise SSO', exact: true }).waitFor();
    await admin.getByText('No SSO connections yet.').waitFor();
    expect(await axeBothThemes(admin, 'sso empty')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-empty');

    // a generic SAML provider, its values typed in (the real IdP's come once the SP values exist)
    const placeholder = forgingIdp();
    const domain = `corp-${unique()}.example`;
    await admin.getByLabel('Provider', { exact: true }).selectOption('saml');
    await admin.getByLabel('Name', { exact: true }).fill('Corp');
    await admin.getByLabel('Email domains').fill(domain);
    await admin.getByText('Or type the values').click();
    await admin.getByLabel('Entity id of the provider').fill(placeholder.entityId);
    await admin.getByLabel('Single sign-on URL (HTTP-Redirect)').fill(placeholder.ssoUrl);
    await admin.getByLabel('Signing certificate (PEM)').fill(placeholder.certificatePem);
    await admin.getByRole('button', { name: 'Create connection' }).click();
    await admin.getByRole('heading', { name: 'Corp', exact: true }).waitFor();
    const entityId = await admin.getByRole('textbox', { name: 'Entity id (Audience)' }).inputValue();
    const acsUrl = await admin.getByRole('textbox', { name: 'ACS URL (HTTP-POST)' }).inputValue();
    expect(acsUrl).toMatch(new RegExp(`/v1/${tenant.slug}/sso/[0-9a-f-]+/saml/acs$`));
    expect(await axeBothThemes(admin, 'sso connection')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-connection');

    // a second connection for the same domain is refused in words
    await admin.getByRole('link', { name: '← All connections' }).click();
    await admin.getByRole('cell', { name: domain }).waitFor();
    await admin.getByLabel('Provider', { exact: true }).selectOption('saml');
    await admin.getByLabel('Name', { exact: true }).fill('Corp again');
    await admin.getByLabel('Email domains').fill(domain);
    await admin.getByText('Or type the values').click();
    await admin.getByLabel('Entity id of the provider').fill(placeholder.entityId);
    await admin.getByLabel('Single sign-on URL (HTTP-Redirect)').fill(placeholder.ssoUrl);
    await admin.getByLabel('Signing certificate (PEM)').fill(placeholder.certificatePem);
    await admin.getByRole('button', { name: 'Create connection' }).click();
    await admin.getByRole('alert').first().waitFor();
    expect(await admin.getByRole('alert').first().textContent()).toContain('This domain belongs to another SSO connection of the workspace.');

    // the real IdP, then "Test this connection": its login form, and back with what it sent
    const carol = { username: 'carol', password: 'carol password', email: `carol@${domain}`, name: 'Carol Corp' };
    idp = await startSimpleSamlIdp({ sp: [{ entityId, acsUrl }], users: [carol] });
    const connectionId = acsUrl.split('/sso/')[1]!.split('/')[0]!;
    const updated = await api.patch(`/v1/${tenant.slug}/sso-connections/${connectionId}`, { saml: { metadataXml: idp.metadataXml } }, { token: tenant.accessToken });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    await admin.goto(`${origin}/app/${tenant.slug}/admin/sso/${connectionId}`);
    await admin.getByRole('button', { name: 'Test this connection' }).click();
    await admin.waitForURL(`${idp.baseUrl}**`);
    await admin.locator('input[name="username"]').fill(carol.username);
    await admin.locator('input[name="password"]').fill(carol.password);
    await admin.locator('form').filter({ has: admin.locator('input[name="password"]') }).locator('[type="submit"]').first().click();
    await admin.getByRole('heading', { name: 'What the provider sent' }).waitFor({ timeout: 30_000 });
    const sent = admin.getByRole('region', { name: 'What the provider sent' });
    expect(await sent.textContent()).toContain(carol.email);
    expect(await sent.textContent()).toContain('Carol Corp');
    expect(await axeBothThemes(admin, 'sso test result')).toEqual([]);
    // the test signed no one in: carol has no account
    const users = await api.get(`/v1/${tenant.slug}/users`, { token: tenant.accessToken });
    expect(JSON.stringify(users.body)).not.toContain(carol.email);
  });
});
