import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { axeBothThemes, buildAndLaunchChromium, CHROMIUM, DESKTOP, fitsPhone, hasChromium, SCREENSHOTS, signedInPage } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The console's events (docs/web.md "Console") driven in Chromium against the real service: audit
 * actions in words in English and German, an event's detail dialog (IP, user agent, details), a
 * deleted user named as such, and the webhook form's grouped event checkboxes; axe in both themes, 360 px.
 */
if (!hasChromium) console.warn(`console-events-e2e: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)`);
const USER_AGENT = 'EventsTest/1.0 (console-events-e2e)';

describe.skipIf(!hasChromium)('console events: audit labels, event details and the webhook event picker', () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let admin: Page;
  let deleted: { email: string; id: string };
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];

  /** On a failure: a screenshot of the admin's page and the browser's errors. */
  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await admin?.screenshot({ path: path.join(SCREENSHOTS, `failed-console-events-${name}.png`), fullPage: true }).catch(() => undefined);
      console.error(`browser errors:\n${pageErrors.join('\n')}\npage: ${admin?.url()}`);
    });
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    server = await startTestServer({});
    api = new Api(server.url);
    tenant = await createTenant(api);
    deleted = await signupMember(api, tenant.slug);
    // an Admin's change that records no email (UserProfileUpdated lists the fields changed, never values)
    const named = await api.patch(`/v1/${tenant.slug}/users/${deleted.id}`, { name: 'Dee Leted' }, { token: tenant.accessToken });
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    // deleted by the admin from a client with its own user agent: the event records it, and the email
    const gone = await api.delete(`/v1/${tenant.slug}/users/${deleted.id}`, { token: tenant.accessToken, headers: { 'user-agent': USER_AGENT } });
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    const context = await browser.newContext({ viewport: DESKTOP });
    contexts.push(context);
    admin = await signedInPage(context, server.url, tenant.slug, tenant.adminEmail, PASSWORD, pageErrors);
  }, 300_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  it('names audit actions in words in English and German, and a deleted user as "Deleted user" with the email the event recorded', async () => {
    diagnoseOnFailure('labels');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/audit`);
    await admin.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    const row = admin.getByRole('row', { name: /User deleted/ });
    await row.waitFor();
    const cells = row.getByRole('cell');
    expect(await cells.nth(1).textContent()).toBe('User deleted');
    expect(await cells.nth(1).locator('span').getAttribute('title')).toBe('UserSoftDeleted');
    expect(await cells.nth(2).textContent()).toBe(`${tenant.adminEmail} (events)`);
    expect(await cells.nth(3).textContent()).toBe(`Deleted user (${deleted.email})`);
    // an event that did not record the email names them by what another event on the page recorded
    expect(await admin.getByRole('row', { name: /Name or picture changed/ }).getByRole('cell').nth(3).textContent()).toBe(`Deleted user (${deleted.email})`);
    // no raw identifier anywhere in the action column
    const actions = await admin.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(actions).toEqual(expect.arrayContaining(['User deleted', 'Name or picture changed', 'User signed up', 'Workspace created']));
    // an Admin's delete is not the person's request for erasure
    expect(actions).not.toContain('Erasure scheduled');
    for (const action of actions) expect(action).not.toMatch(/^[A-Z][a-z]+[A-Z]\w+$/);
    // the action filter offers the actions in words, grouped by area, and filters by the identifier
    expect(await admin.locator('optgroup[label="Users"] option[value="UserSoftDeleted"]').textContent()).toBe('User deleted');
    await admin.getByLabel('Action').selectOption({ label: 'User signed up' });
    await admin.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => [...new Set(await admin.locator('tbody tr td:nth-child(2)').allTextContents())]).toEqual(['User signed up']);
    expect(await axeBothThemes(admin, 'audit labels')).toEqual([]);
    await fitsPhone(admin, 'admin-audit-labels');
    await admin.getByLabel('Action').selectOption('');
    await admin.getByRole('button', { name: 'Apply filters' }).click();
    await row.waitFor();

    // German: the same rows in German words
    await admin.locator('#language-switcher').selectOption('de');
    await admin.getByRole('heading', { name: 'Audit-Protokoll', exact: true }).waitFor();
    const german = admin.getByRole('row', { name: /Benutzer gelöscht/ });
    await german.waitFor();
    expect(await german.getByRole('cell').nth(3).textContent()).toBe(`Gelöschter Benutzer (${deleted.email})`);
    expect(await admin.locator('tbody tr td:nth-child(2)').allTextContents()).toEqual(expect.arrayContaining(['Benutzer registriert', 'Arbeitsbereich erstellt']));
    expect(await admin.locator('optgroup[label="Benutzer"] option[value="UserSoftDeleted"]').textContent()).toBe('Benutzer gelöscht');
    expect(await axeBothThemes(admin, 'audit labels de')).toEqual([]);
    await fitsPhone(admin, 'admin-audit-labels-de');
    await admin.locator('#language-switcher').selectOption('en');
    await admin.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
  });

  it('shows an event in a dialog: time, action and identifier, actor, target, IP address, user agent and the details as pairs', async () => {
    diagnoseOnFailure('detail');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/audit`);
    const opener = admin.getByRole('button', { name: /^Details of “User deleted”/ });
    await opener.click();
    const dialog = admin.getByRole('dialog', { name: 'Event details' });
    await dialog.waitFor();
    const facts = async (list: number) =>
      dialog.locator('dl').nth(list).evaluate((dl) => {
        const pairs: Record<string, string> = {};
        for (const dt of dl.querySelectorAll('dt')) pairs[dt.textContent ?? ''] = dt.nextElementSibling?.textContent ?? '';
        return pairs;
      });
    const event = await facts(0);
    expect(event).toMatchObject({
      Action: 'User deleted',
      'Identifier (API)': 'UserSoftDeleted',
      Actor: `${tenant.adminEmail}${tenant.adminId}`,
      Target: `Deleted user (${deleted.email})${deleted.id}`,
      'User agent': USER_AGENT,
    });
    expect(event['IP address']).toMatch(/^(::ffff:)?127\.0\.0\.1$|^::1$/);
    expect(event.Time).toMatch(/\d{4}/);
    expect(await facts(1)).toEqual({ email: deleted.email });
    expect(await axeBothThemes(admin, 'audit event dialog')).toEqual([]);
    await fitsPhone(admin, 'admin-audit-event-dialog');
    // Escape closes it and the keyboard is back on the button that opened it
    await admin.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await admin.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(/^Details of “User deleted”/);

    // a live user's own page: the newest events in words, with the same details
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/users/${tenant.adminId}`);
    await admin.getByRole('heading', { name: 'Recent events' }).waitFor();
    await admin.getByRole('cell', { name: 'User deleted', exact: true }).waitFor();
    await admin.getByRole('button', { name: /^Details of “User signed up”/ }).click();
    const own = admin.getByRole('dialog', { name: 'Event details' });
    await own.getByText('UserSignup', { exact: true }).waitFor();
    await own.getByRole('button', { name: 'Close' }).click();
    await own.waitFor({ state: 'detached' });
  });

  it('creates a webhook endpoint for the events picked in grouped checkboxes, then switches it to all events', async () => {
    diagnoseOnFailure('webhooks');
    const url = 'https://hooks.example.com/console-events';
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/webhooks`);
    await admin.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
    const picker = admin.getByRole('group', { name: 'Events this endpoint receives' });
    expect(await picker.getByRole('radio', { name: 'All events, including ones added later' }).isChecked()).toBe(true);
    expect(await picker.getByRole('checkbox').count()).toBe(0);
    await admin.getByLabel('Endpoint URL').fill(url);
    await picker.getByRole('radio', { name: 'Only the events picked below' }).check();
    // "only the picked events" with none picked is refused before anything is sent
    await admin.getByRole('button', { name: 'Add endpoint' }).click();
    await picker.getByRole('alert').filter({ hasText: 'Pick at least one event, or choose all events.' }).waitFor();
    await picker.getByRole('group', { name: 'Users' }).getByRole('checkbox', { name: 'User deleted', exact: true }).check();
    const invitations = picker.getByRole('group', { name: 'Invitations' });
    await invitations.getByRole('checkbox', { name: 'All of “Invitations”' }).check();
    expect(await invitations.getByRole('checkbox', { checked: true }).count()).toBe(5);
    // unchecking one leaves the group's own box "mixed"
    await invitations.getByRole('checkbox', { name: 'Invitation expired', exact: true }).uncheck();
    expect(await invitations.getByRole('checkbox', { name: 'All of “Invitations”' }).evaluate((box: HTMLInputElement) => box.indeterminate)).toBe(true);
    await picker.getByText('4 events picked').waitFor();
    expect(await picker.getByRole('alert').count()).toBe(0);
    expect(await axeBothThemes(admin, 'webhook event picker')).toEqual([]);
    await fitsPhone(admin, 'admin-webhooks-event-picker');
    await admin.getByRole('button', { name: 'Add endpoint' }).click();
    await admin.getByLabel('Signing secret', { exact: true }).waitFor();
    const listed = await api.get(`/v1/${tenant.slug}/webhooks`, { token: tenant.accessToken });
    const endpoint = listed.body.items.find((w: { url: string }) => w.url === url);
    expect([...endpoint.eventTypes].sort()).toEqual(['InviteAccepted', 'InviteCreated', 'InviteRevoked', 'UserSoftDeleted']);
    await admin.getByText('4 event types').waitFor();

    // the endpoint's own picker starts from its events; "All events" saves null (every event)
    await admin.getByRole('button', { name: `Deliveries and events of ${url}` }).click();
    const edit = admin.locator('.endpoint .detail').getByRole('group', { name: 'Events this endpoint receives' });
    expect(await edit.getByRole('checkbox', { name: 'User deleted', exact: true }).isChecked()).toBe(true);
    expect(await edit.getByRole('checkbox', { name: 'Invitation expired', exact: true }).isChecked()).toBe(false);
    await edit.getByRole('radio', { name: 'All events, including ones added later' }).check();
    await admin.getByRole('button', { name: 'Save events' }).click();
    await admin.getByText(`The events of ${url} were saved.`).waitFor();
    const saved = await api.get(`/v1/${tenant.slug}/webhooks`, { token: tenant.accessToken });
    expect(saved.body.items.find((w: { url: string }) => w.url === url).eventTypes).toBeNull();
  });
});
