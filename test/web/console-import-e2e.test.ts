import { readFileSync } from 'node:fs';
import path from 'node:path';
import bcrypt from 'bcryptjs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, createTenant, PASSWORD, unique, type TestTenant } from '../helpers/api.js';
import { axeBothThemes, buildAndLaunchChromium, DESKTOP, fitsPhone, hasChromium, SCREENSHOTS, signedInPage } from '../helpers/browser.js';
import { FIREBASE_SAMPLE } from '../helpers/foreign-hashes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The console's "Import users" page and the users page's export (docs/web.md "Importing users",
 * docs/import.md) driven in Chromium against the real service: a CSV file with one bad row previewed
 * with its problem, its bare bcrypt hashes given their algorithm, the import job followed to the end
 * with its counts and its failure report by the file's lines; an NDJSON file with bare Firebase hashes
 * and the project's parameters; the export downloaded as NDJSON. Imported users then sign in with
 * their old passwords. Each state of the page is scanned with axe in both themes and at phone width.
 */
if (!hasChromium) console.warn('console-import-e2e: skipped, Chromium is missing (.ci/run installs it)');

describe.skipIf(!hasChromium)('console pages for importing and exporting users', () => {
  let server: TestServer;
  let browser: Browser;
  let api: Api;
  let tenant: TestTenant;
  let admin: Page;
  const pageErrors: string[] = [];
  const u = unique();
  const ann = { email: `ann-${u}@example.com`, password: 'ann’s old password' };
  const bob = `bob-${u}@example.com`;
  const carol = `carol-${u}@example.com`;
  const dora = { email: `dora-${u}@example.com`, password: 'user1password' };
  const erin = { email: `erin-${u}@example.com`, password: 'erin’s old password' };
  let csvJobId: string;

  /** On a failure: a screenshot of the admin's page and the browser's errors. */
  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await admin?.screenshot({ path: path.join(SCREENSHOTS, `failed-console-import-${name}.png`), fullPage: true }).catch(() => undefined);
      console.error(`browser errors:\n${pageErrors.join('\n')}\npage: ${admin?.url()}`);
    });
  }

  async function signsIn(email: string, password: string): Promise<number> {
    return (await api.post(`/v1/${tenant.slug}/auth/login`, { email, password })).status;
  }

  beforeAll(async () => {
    browser = await buildAndLaunchChromium();
    server = await startTestServer();
    api = new Api(server.url);
    tenant = await createTenant(api);
    const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
    admin = await signedInPage(context, server.url, tenant.slug, tenant.adminEmail, PASSWORD, pageErrors);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('opens from the users page; the empty page passes axe in both themes and fits 360 px', async () => {
    diagnoseOnFailure('open');
    await admin.goto(`${server.url}/app/${tenant.slug}/admin/users`);
    await admin.getByRole('group', { name: 'Import and export' }).getByRole('link', { name: 'Import users' }).click();
    await admin.getByRole('heading', { name: 'Import users', level: 1 }).waitFor();
    expect(new URL(admin.url()).pathname).toBe(`/app/${tenant.slug}/admin/users/import`);
    expect(await axeBothThemes(admin, 'import empty')).toEqual([]);
    await fitsPhone(admin, 'admin-import-empty');
  });

  it('previews a CSV file with its one bad row, then asks for the algorithm of its bare hashes', async () => {
    diagnoseOnFailure('preview');
    const csv = [
      'email,emailVerified,role,passwordHash',
      `${ann.email},true,admin,${bcrypt.hashSync(ann.password, 4)}`,
      `${bob},false,,`,
      'not-an-address,,,',
      `"${carol}",yes,Member,`,
    ].join('\r\n');
    await admin.getByLabel('CSV or NDJSON file').setInputFiles({ name: 'users.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await admin.getByText('Read users.csv as CSV (separated by commas): 4 users.').waitFor();
    const preview = admin.getByRole('region', { name: 'Preview' });
    const rows = preview.getByRole('row');
    expect(await rows.count()).toBe(5);
    expect(await rows.nth(1).getByRole('cell').allTextContents()).toEqual(['2', ann.email, 'Admin', 'Yes', 'Hash, algorithm to choose below']);
    expect(await rows.nth(2).getByRole('cell').allTextContents()).toEqual(['3', bob, 'Member', 'No', 'None (set by a reset link)']);
    expect(await rows.nth(3).getByRole('cell').allTextContents()).toEqual(['4', 'not-an-address', 'Member', 'No', 'None (set by a reset link)']);
    const problems = admin.getByRole('region', { name: '1 problem found' });
    expect(await problems.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual(['4', '“not-an-address” is not an email address.']);
    await admin.getByText('4 users will be sent as an import job.').waitFor();
    await admin.getByText('1 user has a problem the import will most likely refuse; the failure report will name it.').waitFor();

    // one row carries a bare bcrypt hash: nothing is sent before its algorithm is chosen
    const hashes = admin.getByRole('region', { name: 'Password hashes' });
    await hashes.getByText('1 user has a password hash without its algorithm.', { exact: false }).waitFor();
    await admin.getByRole('button', { name: 'Start the import' }).click();
    await admin.getByRole('alert').filter({ hasText: 'Check the password hash settings.' }).waitFor();
    const algorithm = hashes.getByLabel('Hash algorithm');
    expect(await algorithm.getAttribute('aria-invalid')).toBe('true');
    await hashes.getByText('Choose the algorithm the hashes were made with.').waitFor();
    await algorithm.selectOption({ label: 'bcrypt' });
    await rows.nth(1).getByRole('cell', { name: 'Hash, bcrypt' }).waitFor();
    expect(await admin.getByRole('region', { name: 'Import job' }).count()).toBe(0);
    expect(await axeBothThemes(admin, 'import preview')).toEqual([]);
    await fitsPhone(admin, 'admin-import-preview');
  });

  it('runs the import job to the end with the right counts, names the failed line of the file and downloads the failure report', async () => {
    diagnoseOnFailure('job');
    await admin.getByRole('button', { name: 'Start the import' }).click();
    const job = admin.getByRole('region', { name: 'Import job' });
    await job.getByText('The import is finished.').waitFor({ timeout: 30_000 });
    await job.getByText('Done: 3 created, 0 skipped, 1 failed.').waitFor();
    await job.getByText('4 of 4 users processed').waitFor();
    expect(await job.getByRole('progressbar', { name: '4 of 4 users processed' }).getAttribute('value')).toBe('4');
    csvJobId = new URL(admin.url()).searchParams.get('job')!;
    expect(csvJobId).toMatch(/^[0-9a-f-]{36}$/);
    const failures = job.getByRole('region', { name: 'Not imported from users.csv' });
    const failed = failures.getByRole('row');
    expect(await failed.count()).toBe(2);
    expect(await failed.nth(1).getByRole('cell').allTextContents()).toEqual(['4', 'not-an-address', 'Not a valid email address.']);
    expect(await admin.getByRole('button', { name: 'Start the import' }).count()).toBe(0);
    await admin.getByText('4 users were sent as an import job.').waitFor();

    const downloading = admin.waitForEvent('download');
    await job.getByRole('button', { name: 'Download the failure report (NDJSON)' }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe(`import-errors-${csvJobId}.ndjson`);
    const report = readFileSync((await download.path())!, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(report).toEqual([{ index: 2, reason: 'invalid_email' }]);
    expect(await axeBothThemes(admin, 'import finished')).toEqual([]);
    await fitsPhone(admin, 'admin-import-finished');

    // the service holds what the page showed: Ann an Admin who signs in with her old password
    const { body } = await api.get(`/v1/${tenant.slug}/users/import-jobs/${csvJobId}`, { token: tenant.accessToken });
    expect(body.job).toMatchObject({ status: 'Completed', total: 4, processed: 4, created: 3, skipped: 0, failed: 1 });
    const listed = await api.get(`/v1/${tenant.slug}/users?search=${u}`, { token: tenant.accessToken });
    expect(Object.fromEntries(listed.body.items.map((x: { email: string; role: string; status: string }) => [x.email, `${x.role} ${x.status}`]))).toEqual({
      [ann.email]: 'Admin Active', [bob]: 'Member Active', [carol]: 'Member Active',
    });
    expect(await signsIn(ann.email, ann.password)).toBe(200);

    // after a reload the page still follows the job by its address; the file's lines are gone with the page
    await admin.reload();
    await job.getByText('Done: 3 created, 0 skipped, 1 failed.').waitFor();
    await job.getByRole('button', { name: 'Download the failure report (NDJSON)' }).waitFor();
    expect(await failures.count()).toBe(0);
  });

  it('imports an NDJSON file whose bare Firebase hashes take the project\'s parameters from the page', async () => {
    diagnoseOnFailure('ndjson');
    const ndjson = [
      JSON.stringify({ email: dora.email, emailVerified: true, passwordHash: FIREBASE_SAMPLE.hash, passwordSalt: FIREBASE_SAMPLE.salt }),
      JSON.stringify({ email: ann.email }),
      '',
      JSON.stringify({ email: erin.email, password: { algorithm: 'bcrypt', hash: bcrypt.hashSync(erin.password, 4) } }),
    ].join('\n');
    await admin.getByLabel('CSV or NDJSON file').setInputFiles({ name: 'firebase.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(ndjson) });
    await admin.getByText('Read firebase.ndjson as NDJSON: 3 users.').waitFor();
    // a new file ends following the last job
    expect(new URL(admin.url()).searchParams.get('job')).toBeNull();
    expect(await admin.getByRole('region', { name: 'Import job' }).count()).toBe(0);
    const rows = admin.getByRole('region', { name: 'Preview' }).getByRole('row');
    expect(await rows.nth(1).getByRole('cell').allTextContents()).toEqual(['1', dora.email, 'Member', 'Yes', 'Hash, algorithm to choose below']);
    expect(await rows.nth(3).getByRole('cell').allTextContents()).toEqual(['4', erin.email, 'Member', 'No', 'bcrypt']);
    expect(await admin.getByRole('region', { name: /problems? found/ }).count()).toBe(0);

    const hashes = admin.getByRole('region', { name: 'Password hashes' });
    await hashes.getByLabel('Hash algorithm').selectOption({ label: 'Firebase scrypt' });
    const parameters = hashes.getByRole('group', { name: 'Parameters of Firebase scrypt' });
    // Firebase's usual values are filled in; the signer key is the project's own
    expect(await parameters.getByLabel('Salt separator (base64_salt_separator)').inputValue()).toBe(FIREBASE_SAMPLE.saltSeparator);
    expect(await parameters.getByLabel('Rounds (rounds)').inputValue()).toBe('8');
    expect(await parameters.getByLabel('Memory cost (mem_cost)').inputValue()).toBe('14');
    await parameters.getByLabel('Memory cost (mem_cost)').fill('25');
    await admin.getByRole('button', { name: 'Start the import' }).click();
    await parameters.getByText('Enter a whole number within the allowed range.').waitFor();
    await parameters.getByText('This field is required.').waitFor();
    await parameters.getByLabel('Memory cost (mem_cost)').fill(String(FIREBASE_SAMPLE.memCost));
    await parameters.getByLabel('Signer key (base64_signer_key)').fill(FIREBASE_SAMPLE.signerKey);
    expect(await axeBothThemes(admin, 'import firebase settings')).toEqual([]);
    await fitsPhone(admin, 'admin-import-firebase');
    await admin.getByRole('button', { name: 'Start the import' }).click();

    const job = admin.getByRole('region', { name: 'Import job' });
    await job.getByText('Done: 2 created, 1 skipped, 0 failed.').waitFor({ timeout: 30_000 });
    expect(await job.getByRole('button', { name: 'Download the failure report (NDJSON)' }).count()).toBe(0);
    expect(await signsIn(dora.email, dora.password)).toBe(200);
    expect(await signsIn(erin.email, erin.password)).toBe(200);
  });

  it('exports the workspace\'s users from the users page as NDJSON', async () => {
    diagnoseOnFailure('export');
    await usersFromFinishedJob();
    const downloading = admin.waitForEvent('download');
    await admin.getByRole('button', { name: 'Export users (NDJSON)' }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toMatch(new RegExp(`^users-${tenant.slug}-\\d{4}-\\d{2}-\\d{2}\\.ndjson$`));
    const lines = readFileSync((await download.path())!, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.email).sort()).toEqual([tenant.adminEmail, ann.email, bob, carol, dora.email, erin.email].sort());
    expect(lines.find((line) => line.email === ann.email)).toMatchObject({ role: 'Admin', emailVerified: true });
    expect(lines.every((line) => typeof line.importedAt === (line.email === tenant.adminEmail ? 'object' : 'string'))).toBe(true);
    expect(JSON.stringify(lines)).not.toMatch(/password|hash|salt/i);
    expect(await axeBothThemes(admin, 'users with import and export')).toEqual([]);
    await fitsPhone(admin, 'admin-users-import-export');
  });

  /** The users page, reached from the finished job's link. */
  async function usersFromFinishedJob(): Promise<void> {
    await admin.getByRole('region', { name: 'Import job' }).getByRole('link', { name: 'Go to the users' }).click();
    await admin.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
  }
});
