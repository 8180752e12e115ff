import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { answerConfirmation, axeBothThemes, buildAndLaunchChromium, DESKTOP, fitsPhone, hasChromium, SCREENSHOTS, signedInPage } from '../helpers/browser.js';
import { Api, createTenant, PASSWORD, unique, type TestTenant } from '../helpers/api.js';
import { freePort, startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { forgingIdp } from '../helpers/saml-forge.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasSimpleSamlPhp, startSimpleSamlIdp, type SimpleSamlIdp } from '../support/simplesamlphp.js';

/**
 * The console's Enterprise SSO pages (docs/web.md "Enterprise SSO", docs/sso.md) driven in Chromium
 * against the real service: the empty state, the guided setup with pasted metadata, the values to
 * enter at the provider, a taken domain, replacing the metadata by an uploaded file, "Test this
 * connection" through SimpleSAMLphp's login form (accepted and refused), the refused sign-ins,
 * deletion, and an OpenID Connect connection set up and tested the same way; each page scanned with axe in both themes and at phone width.
 */
const ready = hasChromium && hasSimpleSamlPhp();
if (!ready) console.warn('console-sso-e2e: skipped, Chromium or SimpleSAMLphp is missing (.ci/run installs both)');

/** Minimal SAML metadata of an IdP: entity id, HTTP-Redirect sign-in URL, signing certificate. */
function idpMetadataXml(idp: { entityId: string; ssoUrl: string; certificatePem: string }): string {
  const certificate = idp.certificatePem.replace(/-----[^-]+-----|\s/g, '');
  return [
    '<?xml version="1.0"?>',
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${idp.entityId}">`,
    '  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">',
    `    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificate}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    `    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${idp.ssoUrl}"/>`,
    '  </md:IDPSSODescriptor>',
    '</md:EntityDescriptor>',
  ].join('\n');
}

describe.skipIf(!ready)('console pages for enterprise SSO', () => {
  let server: TestServer;
  let base: string;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let admin: Page;
  let idp: SimpleSamlIdp | undefined;
  let openIdProvider: TestOpenIdProvider | undefined;
  let connectionId: string;
  const domain = `corp-${unique()}.example`;
  const alice = { username: 'alice', password: 'alice password', email: `alice@${domain}`, name: 'Alice Example' };
  const bob = { username: 'bob', password: 'bob password', email: `bob@elsewhere-${unique()}.example` };
  const forged = forgingIdp();
  const pageErrors: string[] = [];

  /** On a failure: a screenshot of the admin's page and the browser's errors. */
  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await admin?.screenshot({ path: path.join(SCREENSHOTS, `failed-console-sso-${name}.png`), fullPage: true }).catch(() => undefined);
      console.error(`browser errors:\n${pageErrors.join('\n')}\npage: ${admin?.url()}`);
    });
  }

  /** "Test this connection", then the person's password at SimpleSAMLphp's login form. */
  async function testAs(user: { username: string; password: string }): Promise<void> {
    await admin.getByRole('button', { name: 'Test this connection' }).click();
    await admin.waitForURL(`${idp!.baseUrl}**`);
    await admin.locator('input[name="username"]').fill(user.username);
    await admin.locator('input[name="password"]').fill(user.password);
    await admin.locator('form').filter({ has: admin.locator('input[name="password"]') }).locator('[type="submit"]').first().click();
    await admin.waitForURL(`${base}/app/${tenant.slug}/admin/sso/${connectionId}**`, { timeout: 30_000 });
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    // the browser, PUBLIC_URL and the IdP's redirects all use one origin, so the console's cookies go along
    const port = await freePort();
    // IDP_ALLOW_PRIVATE_ISSUERS: the OpenID provider of the last test is on loopback
    server = await startTestServer({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, IDP_ALLOW_PRIVATE_ISSUERS: 'true' });
    base = `http://127.0.0.1:${port}`;
    api = new Api(server.url);
    tenant = await createTenant(api);
    const context = await browser.newContext({ viewport: DESKTOP });
    admin = await signedInPage(context, base, tenant.slug, tenant.adminEmail, PASSWORD, pageErrors);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await idp?.stop();
    await openIdProvider?.close();
  });

  it('says what enterprise SSO is for, then creates a SAML connection from pasted metadata and shows the values for the provider', async () => {
    diagnoseOnFailure('create');
    await admin.goto(`${base}/app/${tenant.slug}/admin`);
    await admin.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: 'Enterprise SSO' }).click();
    await admin.getByRole('heading', { name: 'Enterprise SSO', exact: true }).waitFor();
    await admin.getByText(/your customers’ people sign in at their company’s identity provider/).waitFor();
    expect(await axeBothThemes(admin, 'sso empty')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-empty');

    await admin.getByRole('link', { name: 'New connection' }).click();
    await admin.getByRole('heading', { name: 'New SSO connection', level: 1 }).waitFor();
    // Okta offers both protocols; ADFS and "another SAML provider" only SAML
    const protocols = admin.getByRole('group', { name: 'Connect by' });
    expect(await protocols.getByRole('radio').count()).toBe(2);
    await admin.getByLabel(/^Another SAML provider/).check();
    expect(await protocols.count()).toBe(0);
    expect(await axeBothThemes(admin, 'sso new')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-new');

    await admin.getByLabel('Name', { exact: true }).fill('Corp');
    await admin.getByLabel('Email domains').fill(domain);
    await admin.getByLabel('The provider asks for a second factor itself').check();
    await admin.getByLabel('Metadata XML', { exact: true }).fill(idpMetadataXml(forged));
    await admin.getByRole('button', { name: 'Create connection' }).click();
    await admin.getByRole('heading', { name: 'Corp', level: 1 }).waitFor();
    await admin.getByText('The connection was created. Now enter these values at the identity provider, then test the connection.').waitFor();
    connectionId = new URL(admin.url()).pathname.split('/').at(-1)!;

    const stored = await api.get(`/v1/${tenant.slug}/sso-connections/${connectionId}`, { token: tenant.accessToken });
    expect(stored.status).toBe(200);
    const { connection } = stored.body;
    expect(connection).toMatchObject({ name: 'Corp', protocol: 'saml', domains: [domain], providerPerformsMfa: true, saml: { idpEntityId: forged.entityId, ssoUrl: forged.ssoUrl } });
    // step 2: the service-provider values under the generic SAML names, then under Okta's
    const atProvider = admin.getByRole('region', { name: 'At the identity provider' });
    expect(await atProvider.getByRole('textbox', { name: 'Assertion consumer service URL (HTTP-POST)', exact: true }).inputValue()).toBe(connection.sp.acsUrl);
    expect(await atProvider.getByRole('textbox', { name: 'SP entity ID (Audience)', exact: true }).inputValue()).toBe(connection.sp.entityId);
    expect(await atProvider.getByRole('textbox', { name: 'SP certificate', exact: true }).inputValue()).toBe(connection.sp.certificate);
    await atProvider.getByLabel('Instructions for').selectOption({ label: 'Okta' });
    expect(await atProvider.getByRole('textbox', { name: 'Single sign-on URL', exact: true }).inputValue()).toBe(connection.sp.acsUrl);
    expect(await atProvider.getByRole('textbox', { name: 'Audience URI (SP Entity ID)', exact: true }).inputValue()).toBe(connection.sp.entityId);
    await atProvider.getByRole('button', { name: 'Copy Single sign-on URL' }).waitFor();
    // the forging IdP's certificate is valid two days: its subject, fingerprint and a warning
    const idpSection = admin.getByRole('region', { name: 'Identity provider', exact: true });
    const certificate = connection.saml.certificates[0];
    const row = idpSection.getByRole('row', { name: new RegExp(certificate.fingerprintSha256) });
    expect(await row.getByRole('cell').first().textContent()).toBe(certificate.subject);
    await row.getByText('Expires in 1 day').waitFor();
    await idpSection.getByRole('alert').getByText(/expires within 30 days/).waitFor();
    await admin.getByRole('region', { name: 'Latest refused sign-ins' }).getByText('No refused sign-ins.').waitFor();
    expect(await axeBothThemes(admin, 'sso connection')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-connection');

    // the list names it
    await admin.getByRole('link', { name: '← All connections' }).click();
    const listed = admin.getByRole('row', { name: /Corp/ });
    expect(await listed.getByRole('cell').nth(1).textContent()).toBe(domain);
    expect(await listed.getByRole('cell').nth(2).textContent()).toBe(`SAML 2.0: ${forged.entityId}`);
    expect(await axeBothThemes(admin, 'sso list')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-list');
  });

  it('refuses a second connection for the same domain, beside the domains field', async () => {
    diagnoseOnFailure('domain-taken');
    await admin.getByRole('link', { name: 'New connection' }).click();
    await admin.getByLabel(/^Another SAML provider/).check();
    await admin.getByLabel('Name', { exact: true }).fill('Corp again');
    await admin.getByLabel('Email domains').fill(`other-${unique()}.example, ${domain}`);
    await admin.getByLabel('Type them in').check();
    await admin.getByLabel('Identity provider entity ID (Issuer)').fill(forged.entityId);
    await admin.getByLabel('Single sign-on URL (HTTP-Redirect)').fill(forged.ssoUrl);
    await admin.getByLabel('Signing certificate (PEM or base64)').fill(forged.certificatePem);
    await admin.getByRole('button', { name: 'Create connection' }).click();
    const taken = 'This domain belongs to another SSO connection of the workspace.';
    await admin.getByRole('alert').filter({ hasText: taken }).waitFor();
    const domains = admin.getByLabel('Email domains');
    expect(await domains.getAttribute('aria-invalid')).toBe('true');
    expect(await domains.inputValue()).toContain(domain);
    expect(await axeBothThemes(admin, 'sso domain taken')).toEqual([]);
    const list = await api.get(`/v1/${tenant.slug}/sso-connections`, { token: tenant.accessToken });
    expect(list.body.items.map((c: { name: string }) => c.name)).toEqual(['Corp']);
  });

  it('takes SimpleSAMLphp\'s metadata as an uploaded file, tests the connection through its login form and shows what it sent', async () => {
    diagnoseOnFailure('test');
    const { body } = await api.get(`/v1/${tenant.slug}/sso-connections/${connectionId}`, { token: tenant.accessToken });
    idp = await startSimpleSamlIdp({ sp: [{ entityId: body.connection.sp.entityId, acsUrl: body.connection.sp.acsUrl }], users: [alice, bob] });
    await admin.goto(`${base}/app/${tenant.slug}/admin/sso/${connectionId}`);
    const edit = admin.getByRole('region', { name: 'Change the connection' });
    await edit.getByLabel('Paste or upload its metadata XML').check();
    await edit.getByLabel('Or upload the metadata file (.xml)').setInputFiles({ name: 'idp-metadata.xml', mimeType: 'application/xml', buffer: Buffer.from(idp.metadataXml) });
    await edit.getByText(`idp-metadata.xml was read (${idp.metadataXml.length} characters).`).waitFor();
    expect(await edit.getByLabel('Metadata XML', { exact: true }).inputValue()).toBe(idp.metadataXml);
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await admin.getByText('The connection was saved.').waitFor();
    await admin.getByRole('region', { name: 'Identity provider', exact: true }).getByText(idp.entityId, { exact: true }).waitFor();
    const stored = await api.get(`/v1/${tenant.slug}/sso-connections/${connectionId}`, { token: tenant.accessToken });
    expect(stored.body.connection.saml).toMatchObject({ idpEntityId: idp.entityId, ssoUrl: idp.ssoUrl });
    expect(stored.body.connection.providerPerformsMfa).toBe(true);

    await testAs(alice);
    const test = admin.getByRole('region', { name: 'Try it' });
    await test.getByText('The test passed: the identity provider’s answer was accepted.').waitFor({ timeout: 30_000 });
    // the code was read once and taken out of the address bar
    expect(new URL(admin.url()).hash).toBe('');
    const facts = await test.locator('dl').innerText();
    expect(facts).toContain(alice.email);
    expect(facts).toContain(idp.entityId);
    const attributes = test.getByRole('table', { name: 'Attributes' });
    const rows = Object.fromEntries(
      await Promise.all((await attributes.getByRole('row').all()).slice(1).map(async (r) => (await r.getByRole('cell').allTextContents()) as [string, string])),
    );
    expect(rows).toMatchObject({ uid: 'alice', email: alice.email, name: alice.name });
    expect(await axeBothThemes(admin, 'sso test passed')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-test-passed');
    // a test signs no one in: alice has no account
    const users = await api.get(`/v1/${tenant.slug}/users?search=${encodeURIComponent(alice.email)}`, { token: tenant.accessToken });
    expect(users.body.items).toEqual([]);
  });

  it('shows a refused test in words and lists it among the latest refused sign-ins', async () => {
    diagnoseOnFailure('refused');
    // the IdP's own session would sign alice in again without its form
    await admin.context().clearCookies({ name: /^SimpleSAML/ });
    await testAs(bob);
    const outside = 'The identity provider sent an address outside this connection’s domains.';
    await admin.getByRole('region', { name: 'Try it' }).getByRole('alert').filter({ hasText: `The test failed. ${outside}` }).waitFor();
    expect(new URL(admin.url()).hash).toBe('');
    const failures = admin.getByRole('region', { name: 'Latest refused sign-ins' });
    const row = failures.getByRole('row').nth(1);
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(outside);
    expect(await axeBothThemes(admin, 'sso test refused')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-test-refused');
  });

  it('deletes the connection after a confirmation and is back to the empty state', async () => {
    diagnoseOnFailure('delete');
    await admin.getByRole('button', { name: 'Delete Corp' }).click();
    expect(await answerConfirmation(admin, 'Delete connection')).toContain('Corp');
    await admin.getByRole('heading', { name: 'Enterprise SSO', exact: true }).waitFor();
    await admin.getByText(/^No connections yet\./).waitFor();
    const list = await api.get(`/v1/${tenant.slug}/sso-connections`, { token: tenant.accessToken });
    expect(list.body.items).toEqual([]);
  });

  it('sets up an OpenID Connect connection for Okta, shows the redirect URI to register, keeps the secret on a change and tests it', async () => {
    diagnoseOnFailure('oidc');
    openIdProvider = await startOpenIdProvider();
    const oidcDomain = `oidc-${unique()}.example`;
    const clientId = `client-${unique()}`;
    const clientSecret = 'client secret value';
    openIdProvider.setAccount('carol', { email: `carol@${oidcDomain}`, email_verified: true });
    await admin.getByRole('link', { name: 'New connection' }).click();
    await admin.getByLabel(/^Okta/).check();
    await admin.getByRole('group', { name: 'Connect by' }).getByLabel('OpenID Connect').check();
    await admin.getByLabel('Name', { exact: true }).fill('Corp OIDC');
    await admin.getByLabel('Email domains').fill(oidcDomain);
    await admin.getByLabel('Issuer URL').fill(openIdProvider.issuer);
    await admin.getByLabel('Client ID').fill(clientId);
    await admin.getByLabel('Client secret').fill(clientSecret);
    expect(await axeBothThemes(admin, 'sso new oidc')).toEqual([]);
    await admin.getByRole('button', { name: 'Create connection' }).click();
    await admin.getByRole('heading', { name: 'Corp OIDC', level: 1 }).waitFor();
    connectionId = new URL(admin.url()).pathname.split('/').at(-1)!;
    const { body } = await api.get(`/v1/${tenant.slug}/sso-connections/${connectionId}`, { token: tenant.accessToken });
    expect(body.connection).toMatchObject({ protocol: 'oidc', domains: [oidcDomain], oidc: { issuer: openIdProvider.issuer, clientId }, saml: null });
    const atProvider = admin.getByRole('region', { name: 'At the identity provider' });
    expect(await atProvider.getByRole('textbox', { name: 'Sign-in redirect URI', exact: true }).inputValue()).toBe(body.connection.sp.redirectUri);
    await atProvider.getByText(/OIDC → Web Application/).waitFor();
    // no secret is shown; a change that leaves it empty keeps it
    expect(await admin.locator('main').innerText()).not.toContain(clientSecret);
    const edit = admin.getByRole('region', { name: 'Change the connection' });
    await edit.getByLabel('Name', { exact: true }).fill('Corp OIDC renamed');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await admin.getByText('The connection was saved.').waitFor();
    await admin.getByRole('heading', { name: 'Corp OIDC renamed', level: 1 }).waitFor();
    expect(await axeBothThemes(admin, 'sso oidc connection')).toEqual([]);
    await fitsPhone(admin, 'admin-sso-oidc');

    await openIdProvider.addClient(clientId, clientSecret, body.connection.sp.redirectUri);
    await admin.getByRole('button', { name: 'Test this connection' }).click();
    await admin.waitForURL(`${openIdProvider.issuer}/**`);
    await admin.locator('input[name="login"]').fill('carol');
    await admin.locator('input[name="password"]').fill('any');
    await admin.getByRole('button', { name: 'Sign-in' }).click();
    await admin.getByRole('button', { name: 'Continue' }).click();
    await admin.waitForURL(`${base}/app/${tenant.slug}/admin/sso/${connectionId}**`, { timeout: 30_000 });
    // the token exchange used the kept secret: the test passes
    const test = admin.getByRole('region', { name: 'Try it' });
    await test.getByText('The test passed: the identity provider’s answer was accepted.').waitFor({ timeout: 30_000 });
    const facts = await test.locator('dl').innerText();
    expect(facts).toContain(`carol@${oidcDomain}`);
    expect(facts).toContain(openIdProvider.issuer);
  });
});
