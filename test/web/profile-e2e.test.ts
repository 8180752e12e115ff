import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { axeBothThemes, buildAndLaunchChromium, CHROMIUM, DESKTOP, fitsPhone, hasChromium, SCREENSHOTS, signedInPage } from '../helpers/browser.js';
import { Api, createTenant, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Name and picture in the pages (docs/web.md "URLs"), driven in Chromium against the real service:
 * the account page edits them (the picture shown with its alt text, the initials without one), the
 * console's users list shows verified, created and last sign-in with the name and picture beside the
 * email and no buttons on its rows, and a user's page edits them; axe in both themes, 360 px.
 */
if (!hasChromium) console.warn(`profile-e2e: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)`);

/** The pictures' host: answered by the browser context itself (the machine has no network). */
const PICTURES = 'https://images.example.com';
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe.skipIf(!hasChromium)('profile: name and picture in the account page and the console', () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let member: { id: string; email: string };
  let person: Page;
  let admin: Page;
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];
  const pictureRequests: { url: string; referer: string | undefined }[] = [];

  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      for (const [who, page] of [['person', person], ['admin', admin]] as const) {
        await page?.screenshot({ path: path.join(SCREENSHOTS, `failed-profile-${name}-${who}.png`), fullPage: true }).catch(() => undefined);
      }
      console.error(`browser errors:\n${pageErrors.join('\n')}`);
    });
  }

  async function newContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: DESKTOP });
    await context.route(`${PICTURES}/**`, async (route) => {
      pictureRequests.push({ url: route.request().url(), referer: route.request().headers().referer });
      if (route.request().url().endsWith('/missing.png')) await route.fulfill({ status: 404, body: '' });
      else await route.fulfill({ status: 200, contentType: 'image/png', body: PNG });
    });
    contexts.push(context);
    return context;
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    server = await startTestServer({});
    api = new Api(server.url);
    tenant = await createTenant(api);
    member = await signupMember(api, tenant.slug);
    person = await signedInPage(await newContext(), server.url, tenant.slug, member.email, PASSWORD, pageErrors);
    admin = await signedInPage(await newContext(), server.url, tenant.slug, tenant.adminEmail, PASSWORD, pageErrors);
  }, 300_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  it('the account page sets name and picture, refuses an http:// picture beside its field, and shows initials once the picture is cleared', async () => {
    diagnoseOnFailure('account');
    const profile = person.getByRole('region', { name: 'Profile' });
    await profile.waitFor();
    await profile.getByText('No display name yet').waitFor();
    await profile.getByRole('img', { name: 'Your initials' }).waitFor();

    await profile.getByLabel('Picture URL').fill('http://images.example.com/ada.png');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await profile.getByText('Enter a full URL, starting with https://.').waitFor();

    await profile.getByLabel('Display name').fill('  Ada Lovelace ');
    await profile.getByLabel('Picture URL').fill(`${PICTURES}/ada.png`);
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await profile.getByText('Profile saved.').waitFor();
    const picture = profile.getByRole('img', { name: 'Your picture' });
    await picture.waitFor();
    expect(await picture.getAttribute('src')).toBe(`${PICTURES}/ada.png`);
    await expect.poll(() => picture.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(1);
    await profile.getByText('Ada Lovelace', { exact: true }).waitFor();
    // the picture's host is not told which page showed it
    expect(pictureRequests.at(-1)).toEqual({ url: `${PICTURES}/ada.png`, referer: undefined });
    const me = await api.get(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken });
    expect(me.body.user).toMatchObject({ name: 'Ada Lovelace', picture: `${PICTURES}/ada.png` });
    expect(await axeBothThemes(person, 'account profile')).toEqual([]);
    await fitsPhone(person, 'account-profile');

    // a picture that does not load shows the initials instead
    await profile.getByLabel('Picture URL').fill(`${PICTURES}/missing.png`);
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await expect.poll(() => profile.locator('.avatar').textContent()).toBe('AL');
    // an emptied field clears it
    await profile.getByLabel('Picture URL').fill('');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await profile.getByRole('img', { name: 'Your initials' }).waitFor();
    expect((await api.get(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).body.user.picture).toBeNull();
    await profile.getByLabel('Picture URL').fill(`${PICTURES}/ada.png`);
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await profile.getByRole('img', { name: 'Your picture' }).waitFor();
  });

  it('the users list shows verified, created and last sign-in in the page language, the name and picture beside the email, and no buttons on a row', async () => {
    diagnoseOnFailure('list');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/users`);
    await admin.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    const headers = await admin.getByRole('columnheader').allTextContents();
    expect(headers).toEqual(['User', 'Role', 'Status', 'Verified', 'Authenticator', 'Created', 'Last sign-in']);
    const row = admin.getByRole('row', { name: new RegExp(member.email.replace(/[.+]/g, '\\$&')) });
    await row.waitFor();
    const cells = row.getByRole('cell');
    expect(await cells.nth(0).textContent()).toBe(`Ada Lovelace${member.email}`);
    await cells.nth(0).getByRole('link', { name: member.email, exact: true }).waitFor();
    // the small picture is decorative beside the name
    expect(await cells.nth(0).locator('img').getAttribute('alt')).toBe('');
    const verified = (await api.get(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).body.user.emailVerified as boolean;
    expect(await cells.nth(3).textContent()).toBe(verified ? 'Yes' : 'No');
    const today = new Intl.DateTimeFormat('en', { dateStyle: 'medium' }).format(new Date());
    expect(await cells.nth(5).textContent()).toBe(today);
    expect(await cells.nth(6).textContent()).toBe(today);
    expect(await row.getByRole('button').count()).toBe(0);
    // the owner without a name: the address alone
    expect(await admin.getByRole('row', { name: new RegExp(tenant.adminEmail.replace(/[.+]/g, '\\$&')) }).getByRole('cell').first().textContent()).toBe(tenant.adminEmail);
    expect(await axeBothThemes(admin, 'users list')).toEqual([]);
    await fitsPhone(admin, 'admin-users-profile');

    // in German: German column names and a German date
    await admin.locator('#language-switcher').selectOption('de');
    await admin.getByRole('columnheader', { name: 'Letzte Anmeldung' }).waitFor();
    const germanToday = new Intl.DateTimeFormat('de', { dateStyle: 'medium' }).format(new Date());
    expect(await admin.getByRole('row', { name: new RegExp(member.email.replace(/[.+]/g, '\\$&')) }).getByRole('cell').nth(5).textContent()).toBe(germanToday);
    await admin.locator('#language-switcher').selectOption('en');
    await admin.getByRole('columnheader', { name: 'Last sign-in' }).waitFor();
  });

  it('a user\'s page shows the picture and edits the name; the list follows', async () => {
    diagnoseOnFailure('user-page');
    await admin.getByRole('link', { name: member.email, exact: true }).click();
    await admin.getByRole('heading', { name: member.email, exact: true }).waitFor();
    await admin.getByRole('img', { name: `Picture of ${member.email}` }).waitFor();
    const editor = admin.getByRole('region', { name: 'Name and picture' });
    expect(await editor.getByLabel('Display name').inputValue()).toBe('Ada Lovelace');
    await editor.getByLabel('Display name').fill('Augusta Ada King');
    await editor.getByRole('button', { name: 'Save name and picture' }).click();
    await editor.getByText('Name and picture saved.').waitFor();
    await admin.locator('.profile-head').getByText('Augusta Ada King').waitFor();
    // every action stays on the page
    for (const action of ['Make Admin', 'Suspend', 'Send reset', 'Delete']) {
      await admin.getByRole('button', { name: new RegExp(`^${action}`) }).first().waitFor();
    }
    expect(await axeBothThemes(admin, 'user page profile')).toEqual([]);
    await fitsPhone(admin, 'admin-user-profile');
    await admin.getByRole('link', { name: '← All users' }).click();
    await admin.getByRole('row', { name: /Augusta Ada King/ }).waitFor();
  });
});
