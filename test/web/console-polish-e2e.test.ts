import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, createTenant, PASSWORD, type TestTenant } from '../helpers/api.js';
import { answerConfirmation, axeBothThemes, buildAndLaunchChromium, CHROMIUM, DESKTOP, fitsPhone, hasChromium, PHONE, SCREENSHOTS, signedInPage } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The console's common parts (docs/web.md "Console"), driven in Chromium against the real service:
 * the "Getting started" checklist of a new workspace, the confirmation dialog (web/src/confirm.tsx),
 * forms that empty after a create, the new API key's Copy button, enum values in words (German), the
 * navigation folded behind "Menu" at 360 px, and the OpenID Connect guide of the applications page.
 */
if (!hasChromium) console.warn(`console-polish-e2e: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)('console: confirmations, checklist, menu and labels', () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let admin: Page;
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];

  /** On a failure: a screenshot of the admin's page and the browser's errors. */
  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await admin?.screenshot({ path: path.join(SCREENSHOTS, `failed-console-polish-${name}.png`), fullPage: true }).catch(() => undefined);
      console.error(`browser errors:\n${pageErrors.join('\n')}\npage: ${admin?.url()}`);
    });
  }

  /** The accessible name (aria-label, else text) of the element that has focus. */
  const focused = (page: Page) => page.evaluate(() => {
    const el = document.activeElement;
    return el?.getAttribute('aria-label') ?? el?.textContent ?? '';
  });

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    server = await startTestServer({});
    api = new Api(server.url);
    tenant = await createTenant(api);
    const context = await browser.newContext({ viewport: DESKTOP, permissions: ['clipboard-read', 'clipboard-write'] });
    contexts.push(context);
    admin = await signedInPage(context, server.url, tenant.slug, tenant.adminEmail, PASSWORD, pageErrors);
  }, 300_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  it('shows a new workspace a checklist computed from its state, whose links work and whose dismissal is remembered', async () => {
    diagnoseOnFailure('checklist');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin`);
    const checklist = admin.getByRole('region', { name: 'Getting started' });
    await checklist.getByText('0 of 5 steps done.').waitFor();
    expect(await checklist.getByRole('listitem').allTextContents()).toEqual([
      '○To do:Put your brand on the pages (name, colour or logo)',
      '○To do:Add an application',
      '○To do:Invite a colleague',
      '○To do:Choose the multi-factor authentication policy',
      '○To do:Add a webhook endpoint',
    ]);
    expect(await axeBothThemes(admin, 'getting started')).toEqual([]);

    // an application and a second person: two steps done on the next visit
    const app = await api.post(`/v1/${tenant.slug}/applications`, { name: 'Portal', type: 'spa', redirectUris: ['https://portal.example.com/callback'] }, { token: tenant.accessToken });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: `colleague-${Date.now()}@example.com`, role: 'Member' }, { token: tenant.accessToken });
    expect(invite.status, JSON.stringify(invite.body)).toBe(200);
    await admin.reload();
    await checklist.getByText('2 of 5 steps done.').waitFor();
    expect(await checklist.getByRole('listitem').filter({ hasText: 'Add an application' }).textContent()).toBe('✓Done:Add an application');
    expect(await checklist.getByRole('listitem').filter({ hasText: 'Invite a colleague' }).textContent()).toBe('✓Done:Invite a colleague');

    // the MFA policy chosen (even back to the default) counts as done
    expect((await api.patch(`/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Disabled' }, { token: tenant.accessToken })).status).toBe(200);
    expect((await api.patch(`/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Optional' }, { token: tenant.accessToken })).status).toBe(200);
    await admin.reload();
    await checklist.getByText('3 of 5 steps done.').waitFor();

    await checklist.getByRole('link', { name: 'Add a webhook endpoint' }).click();
    await admin.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
    await admin.goBack();
    await checklist.getByRole('button', { name: 'Dismiss the checklist' }).click();
    await checklist.waitFor({ state: 'detached' });
    await admin.reload();
    await admin.getByRole('heading', { name: 'Activity', exact: true }).waitFor();
    await admin.getByText('Active users, last 7 days').waitFor();
    expect(await admin.getByRole('region', { name: 'Getting started' }).count()).toBe(0);
  });

  it('asks in a dialog before deleting a role: Cancel and Escape keep it and give focus back, the named button deletes it', async () => {
    diagnoseOnFailure('confirm');
    const role = await api.post(`/v1/${tenant.slug}/roles`, { name: 'Temp', permissions: [] }, { token: tenant.accessToken });
    expect(role.status, JSON.stringify(role.body)).toBe(200);
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/roles`);
    const trigger = admin.getByRole('button', { name: 'Delete the role Temp' });
    await trigger.click();
    const dialog = admin.getByRole('alertdialog', { name: 'Please confirm' });
    await dialog.waitFor();
    expect(await dialog.getAttribute('aria-describedby')).toBeTruthy();
    const description = await dialog.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')!)?.textContent);
    expect(description).toBe('Delete the role Temp? Everyone holding it loses its permissions from their next token.');
    expect(await focused(admin)).toBe('Cancel'); // focus moved into the dialog, on the safe choice
    expect(await dialog.getByRole('button').allTextContents()).toEqual(['Cancel', 'Delete role']);
    expect(await axeBothThemes(admin, 'confirmation dialog')).toEqual([]);
    await fitsPhone(admin, 'admin-confirm-dialog');

    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await focused(admin)).toBe('Delete the role Temp');
    await admin.getByRole('row', { name: /Temp/ }).waitFor();

    await trigger.click();
    await dialog.waitFor();
    await admin.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await focused(admin)).toBe('Delete the role Temp');
    expect(await admin.getByRole('row', { name: /Temp/ }).count()).toBe(1);
    const stillThere = await api.get(`/v1/${tenant.slug}/roles`, { token: tenant.accessToken });
    expect(stillThere.body.items.map((r: { name: string }) => r.name)).toEqual(['Temp']);

    await trigger.click();
    expect(await answerConfirmation(admin, 'Delete role')).toContain('Temp');
    await admin.getByText('The role Temp was deleted.').waitFor();
    const gone = await api.get(`/v1/${tenant.slug}/roles`, { token: tenant.accessToken });
    expect(gone.body.items).toEqual([]);
  });

  it('empties the API key form after a create and offers to copy the new key', async () => {
    diagnoseOnFailure('api-key');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/api-keys`);
    await admin.getByLabel('Name', { exact: true }).fill('CI');
    await admin.getByLabel('Environment').selectOption('test');
    await admin.getByRole('button', { name: 'Create key' }).click();
    const key = admin.getByLabel('New API key', { exact: true });
    await key.waitFor();
    const plaintext = await key.inputValue();
    expect(plaintext.length).toBeGreaterThan(20);
    // the form is empty for the next key
    expect(await admin.getByLabel('Name', { exact: true }).inputValue()).toBe('');
    expect(await admin.getByLabel('Environment').inputValue()).toBe('live');
    // enum values in words: the environment of the listed key
    expect(await admin.getByRole('row', { name: /CI/ }).getByRole('cell').nth(2).textContent()).toBe('Test');
    await admin.getByRole('button', { name: 'Copy New API key' }).click();
    await admin.getByRole('button', { name: 'Copied New API key' }).waitFor();
    expect(await admin.evaluate(() => navigator.clipboard.readText())).toBe(plaintext);
    expect(await axeBothThemes(admin, 'api keys with a new key')).toEqual([]);
  });

  it('names enum values in words in German: sign-up and MFA policies, key environments', async () => {
    diagnoseOnFailure('german');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/settings`);
    await admin.locator('#language-switcher').selectOption('de');
    await admin.getByRole('heading', { name: 'Einstellungen des Arbeitsbereichs', exact: true }).waitFor();
    const options = (label: string) => admin.getByLabel(label, { exact: true }).locator('option').allTextContents();
    expect(await options('Wer sich registrieren darf')).toEqual(['Alle', 'Nur bestimmte Domains', 'Nur mit Einladung']);
    expect(await options('Mehr-Faktor-Authentifizierung')).toEqual(['Für alle aus', 'Freiwillig: jede Person entscheidet', 'Pflicht für alle']);
    await admin.getByRole('navigation', { name: 'Admin-Konsole' }).getByRole('link', { name: 'API-Schlüssel' }).click();
    expect(await options('Umgebung')).toEqual(['Live', 'Test']);
    expect(await admin.getByRole('row', { name: /CI/ }).getByRole('cell').nth(2).textContent()).toBe('Test');
    await admin.locator('#language-switcher').selectOption('en');
    await admin.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
  });

  it('folds the navigation behind "Menu" at 360 px and shows it as before on a wide screen', async () => {
    diagnoseOnFailure('menu');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/users`);
    await admin.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    const nav = admin.getByRole('navigation', { name: 'Admin console' });
    expect(await nav.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    expect(await nav.getByRole('link', { name: 'Webhooks' }).isVisible()).toBe(true);

    await admin.setViewportSize(PHONE);
    const menu = nav.getByRole('button', { name: 'Menu' });
    expect(await menu.isVisible()).toBe(true);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    const controlled = admin.locator(`[id="${await menu.getAttribute('aria-controls')}"]`);
    expect(await controlled.isVisible()).toBe(false);
    expect(await nav.getByRole('link', { name: 'Webhooks' }).isVisible()).toBe(false);
    await admin.screenshot({ path: path.join(SCREENSHOTS, 'admin-menu-closed-phone.png') });

    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    expect(await controlled.isVisible()).toBe(true);
    expect(await axeBothThemes(admin, 'open menu')).toEqual([]);
    await admin.screenshot({ path: path.join(SCREENSHOTS, 'admin-menu-open-phone.png') });
    expect(await admin.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');

    // a page chosen from the menu folds it again
    await menu.click();
    await nav.getByRole('link', { name: 'Webhooks' }).click();
    await admin.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.getByRole('link', { name: 'Webhooks' }).isVisible()).toBe(false);
    await admin.setViewportSize(DESKTOP);
  });

  it('guides an app developer through OpenID Connect sign-in on the applications page, linking the API reference', async () => {
    diagnoseOnFailure('oidc-guide');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/applications`);
    const guide = admin.getByRole('region', { name: 'Sign people in with OpenID Connect' });
    await guide.waitFor();
    expect(await guide.getByRole('listitem').count()).toBe(4);
    expect(await guide.getByLabel('Issuer', { exact: true }).inputValue()).toBe(`${server.url}/v1/${tenant.slug}/oidc`);
    expect(await guide.getByLabel('Discovery URL', { exact: true }).inputValue()).toBe(`${server.url}/v1/${tenant.slug}/oidc/.well-known/openid-configuration`);
    const discovery = await fetch(`${server.url}/v1/${tenant.slug}/oidc/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(await axeBothThemes(admin, 'applications with the guide')).toEqual([]);
    await fitsPhone(admin, 'admin-applications-guide');

    // the application form empties after a create; the new secret stays to copy
    const add = admin.getByRole('region', { name: 'Add an application' });
    await add.getByLabel(/Web application/).check();
    await add.getByLabel('Name', { exact: true }).fill('Back office');
    await add.getByLabel('Redirect URIs (one per line)').fill('https://office.example.com/callback');
    await add.getByRole('button', { name: 'Add application' }).click();
    await add.getByLabel('Client secret', { exact: true }).waitFor();
    await add.getByRole('button', { name: 'Copy Client secret' }).waitFor();
    expect(await add.getByLabel('Name', { exact: true }).inputValue()).toBe('');
    expect(await add.getByLabel('Redirect URIs (one per line)').inputValue()).toBe('');
    expect(await add.getByLabel(/Web application/).isChecked()).toBe(true);

    await guide.getByRole('link', { name: 'Applications in the API reference' }).click();
    await admin.waitForURL(`${server.url}/docs#/applications`);
    await admin.locator('#api-reference').waitFor();
  });
});
