import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import * as oidc from 'openid-client';
import { Api } from '../helpers/api.js';
import { answerConfirmation } from '../helpers/browser.js';
import { freePort, startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { registerRelyingParty, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { Authenticator } from '../helpers/totp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The hosted pages driven in a real browser (Debian's Chromium through playwright-core) against the
 * real service and a real SMTP sink: people's journeys through /, /app/{slug}/… and /docs (docs/web.md).
 */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(`web-e2e: skipped, ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`);
}

const SCREENSHOTS = path.resolve('test-results/screenshots');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 360, height: 740 };
const PASSWORD = 'correct horse battery staple';
/** A computed style property of an element: passed to `locator.evaluate`, so it runs inside the page (the test's own types have no DOM). */
const computedStyle = (element: unknown, name: string): string =>
  (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(element)[name] ?? '';

/** A 1×1 GIF: the dark theme's logo in the branding test. */
const DARK_LOGO_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
/** The source of the logo image the page shows (the other theme's is rendered but hidden): passed to `evaluate`, so it runs in the page. */
const visibleLogoSource = (header: unknown): string => {
  type Img = { src: string; alt: string; offsetParent: unknown };
  const images = (header as { querySelectorAll(selector: string): Img[] }).querySelectorAll('img');
  const shown = [...images].filter((img) => img.offsetParent !== null);
  return shown.map((img) => `${new URL(img.src).pathname.replace(/^\/v1\/[^/]+/, '')} alt=${img.alt}`).join(' | ');
};

/** A 16×16 PNG logo (a teal square). */
const LOGO_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGPgL8sjCTGMahjVMHw1AADRzfMB5Ye3vAAAAABJRU5ErkJggg==',
  'base64',
);

describe.skipIf(!hasChromium)('web pages in a browser', () => {
  let server: TestServer;
  let sink: SmtpSink;
  let provider: TestOpenIdProvider;
  let browser: Browser;
  const cspViolations: string[] = [];
  const contexts: BrowserContext[] = [];
  const pages: Page[] = [];
  const pageErrors: string[] = [];

  /** On a failure: a screenshot of every open page and the browser's errors, to see what a person saw. */
  function diagnoseOnFailure(name: string): void {
    onTestFailed(async () => {
      await Promise.all(pages.map((p, i) => p.screenshot({ path: path.join(SCREENSHOTS, `failed-${name}-${i}.png`), fullPage: true }).catch(() => undefined)));
      console.error(`browser errors:\n${pageErrors.join('\n')}\npages: ${pages.map((p) => p.url()).join(', ')}`);
    });
  }
  const run = Date.now().toString(36);
  const adminEmail = `owner-${run}@acme.test`;
  const memberEmail = `member-${run}@acme.test`;
  const colleagueEmail = `colleague-${run}@acme.test`;
  let slug = '';
  let admin: Page;
  let member: Page;
  let memberAuthenticator: Authenticator;

  /** A fresh browser profile (own cookies and storage), as a separate person would have. */
  async function newPerson(viewport = DESKTOP, locale?: string): Promise<Page> {
    // `locale` sets the browser's languages (navigator.languages and Accept-Language), as a person's own browser would
    const context = await browser.newContext({ viewport, ...(locale ? { locale } : {}) });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
      if (msg.type() === 'error') pageErrors.push(`${page.url()}: ${msg.text()}`);
    });
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    pages.push(page);
    return page;
  }

  /** A mailed link, opened on this test server (the link's path and query are what the mail decides). */
  function onServer(link: string): string {
    const url = new URL(link);
    return `${server.url}${url.pathname}${url.search}`;
  }

  function linkIn(text: string): string {
    const link = /https?:\/\/\S+\/app\/\S+/.exec(text)?.[0];
    expect(link, text).toBeDefined();
    return link!;
  }

  async function shoot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }

  /**
   * An application's authorization-code + PKCE sign-in played in `person`'s browser: opens the
   * authorization URL, lets `signIn` act on the workspace's hosted page, catches the redirect to the
   * application's callback and exchanges the code with openid-client (ID token checked against the JWKS).
   */
  async function signInToApplication(person: Page, rp: RelyingParty, params: Record<string, string>, signIn: () => Promise<void>) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: rp.redirectUri, scope: 'openid email', state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...params,
    });
    let callback: URL | undefined;
    await person.route(`${rp.redirectUri}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>App</title><h1>Back in the app</h1>' });
    });
    await person.goto(url.href);
    await person.getByText('Sign in to continue to').waitFor();
    await signIn();
    await person.getByRole('heading', { name: 'Back in the app' }).waitFor();
    return oidc.authorizationCodeGrant(rp.config, callback!, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
  }

  /** Creates a workspace through the API with `owner` as its first Admin; @returns its slug. */
  async function createWorkspace(name: string, owner: string): Promise<string> {
    const created = await fetch(`${server.url}/v1/tenants`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: { name }, admin: { email: owner, password: PASSWORD } }),
    });
    expect(created.status).toBe(200);
    return ((await created.json()) as { tenantSlug: string }).tenantSlug;
  }

  /** An Admin's access token from the API (the workspace owner has no second factor). */
  async function adminAccessToken(baseUrl: string, tenantSlug: string, email: string): Promise<string> {
    const res = await fetch(`${baseUrl}/v1/${tenantSlug}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { accessToken: string }).accessToken;
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await build({ configFile: path.resolve('web/vite.config.ts'), logLevel: 'warn' });
    sink = await startSmtpSink();
    provider = await startOpenIdProvider();
    const port = await freePort();
    // webhook endpoints on this machine's receiver: private targets allowed for this test server only
    server = await startTestServer({ SMTP_URL: sink.url, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, IDP_ISSUER: provider.issuer, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true, // each launch uses a fresh temporary profile (user data dir)
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 300_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    await provider?.close();
    await sink?.close();
  });

  it('serves pages with a strict CSP, HTML uncached and hashed assets immutable', async () => {
    diagnoseOnFailure('1');
    const html = await fetch(`${server.url}/app/anything/sign-in`);
    expect(html.status).toBe(200);
    expect(html.headers.get('cache-control')).toBe('no-store');
    const csp = html.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const body = await html.text();
    expect(body).not.toMatch(/<script>(?!<\/script>)/); // no inline script
    const asset = /\/assets\/[^"]+\.js/.exec(body)?.[0];
    const assetRes = await fetch(`${server.url}${asset}`);
    expect(assetRes.status).toBe(200);
    expect(assetRes.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // a favicon, so the tab shows the product and the browser does not ask for /favicon.ico
    const icon = /<link rel="icon" type="image\/svg\+xml" href="(\/assets\/[^"]+\.svg)"/.exec(body)?.[1];
    expect(icon, body).toBeDefined();
    const iconRes = await fetch(`${server.url}${icon}`);
    expect(iconRes.status).toBe(200);
    expect(iconRes.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    // its own CSP lets its inline <style> (the dark scheme's colours) apply, and nothing run
    const iconCsp = iconRes.headers.get('content-security-policy') ?? '';
    expect(iconCsp).toContain("style-src 'unsafe-inline'");
    expect(iconCsp).toContain('sandbox');
    expect(iconCsp).not.toContain('script-src');
  });

  it('draws the favicon for the browser\'s colour scheme: a dark blue shield on light chrome, a light one on dark chrome', async () => {
    diagnoseOnFailure('favicon');
    const html = await (await fetch(`${server.url}/`)).text();
    const icon = /<link rel="icon" type="image\/svg\+xml" href="(\/assets\/[^"]+\.svg)"/.exec(html)?.[1];
    expect(icon, html).toBeDefined();
    const page = await newPerson();
    const violationsBefore = cspViolations.length;
    const fills = async (scheme: 'light' | 'dark') => {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${server.url}${icon}`);
      return page.evaluate(() => {
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<unknown> } }).document;
        const style = (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle;
        return { shield: style(doc.querySelectorAll('.shield')[0]).fill, mark: style(doc.querySelectorAll('.mark')[0]).fill };
      });
    };
    expect(await fills('light')).toEqual({ shield: 'rgb(36, 86, 199)', mark: 'rgb(255, 255, 255)' });
    expect(await fills('dark')).toEqual({ shield: 'rgb(138, 180, 248)', mark: 'rgb(11, 26, 58)' });
    expect(cspViolations.slice(violationsBefore)).toEqual([]);
  });

  it('creates a workspace from /', async () => {
    diagnoseOnFailure('2');
    admin = await newPerson();
    await admin.goto(`${server.url}/`);
    await shoot(admin, 'home-desktop');
    await admin.getByLabel('Workspace name').fill(`Acme ${run}`);
    await admin.getByLabel('Your email').fill(adminEmail);
    await admin.getByLabel('Password').fill(PASSWORD);
    await admin.getByRole('button', { name: 'Create workspace' }).click();
    await admin.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    slug = new URL(admin.url()).pathname.split('/')[2]!;
    expect(admin.url()).toBe(`${server.url}/app/${slug}/account`);
    await expect(admin.getByText(adminEmail)).toBeTruthy();
    expect(await admin.locator('dd').nth(1).textContent()).toBe('Admin');

    // the refresh token is in an HttpOnly cookie on /trpc: a reload keeps the session, scripts cannot read it;
    // the session's binding, which finishing an application sign-in needs, only goes to the provider's interaction path
    const cookies = [...(await admin.context().cookies())].sort((a, b) => a.name.localeCompare(b.name));
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toMatchObject({ name: `refresh_${slug}`, path: '/trpc', httpOnly: true, sameSite: 'Strict' });
    expect(cookies[1]).toMatchObject({ name: `session_binding_${slug}`, path: `/v1/${slug}/oidc/interaction`, httpOnly: true, sameSite: 'Strict' });
    // evaluated in the page (strings, as this file is type-checked without the DOM library)
    expect(await admin.evaluate('document.cookie')).toBe('');
    expect(await admin.evaluate('window.localStorage.length + window.sessionStorage.length')).toBe(0);
    await admin.reload();
    await admin.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    await shoot(admin, 'account-desktop');
  });

  it('signs up a Member, who gets a 403 page for the admin console', async () => {
    diagnoseOnFailure('3');
    member = await newPerson(PHONE);
    await member.goto(`${server.url}/app/${slug}/sign-in`);
    await shoot(member, 'sign-in-phone');
    await member.getByRole('link', { name: 'Create an account' }).click();
    await member.getByLabel('Email').fill(memberEmail);
    await member.getByLabel('Password').fill('short');
    await member.getByRole('button', { name: 'Sign up' }).click();
    await member.getByRole('alert').waitFor();
    expect(await member.locator('.field-error').first().textContent()).toContain('Use at least 12 characters.'); // not Zod's own words
    await member.getByLabel('Password').fill(PASSWORD);
    await member.getByRole('button', { name: 'Sign up' }).click();
    await member.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    expect(await member.getByRole('link', { name: 'Admin console' }).count()).toBe(0);

    await member.goto(`${server.url}/app/${slug}/admin`);
    await member.getByRole('heading', { name: '403 · Admins only', exact: true }).waitFor();
  });

  it('enrols TOTP from the QR code page (recovery codes shown once), signs in with the TOTP code, then with a recovery code', async () => {
    diagnoseOnFailure('4');
    await member.goto(`${server.url}/app/${slug}/account`);
    await member.getByRole('button', { name: 'Set up authenticator app' }).click();
    const qr = member.getByRole('img', { name: 'QR code of the authenticator secret' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    await shoot(member, 'totp-enrolment-phone');
    memberAuthenticator = new Authenticator(await member.getByLabel('Secret').inputValue());
    await member.getByLabel('Authenticator code').fill(await memberAuthenticator.nextCode());
    await member.getByRole('button', { name: 'Turn on' }).click();
    await expect.poll(() => member.locator('dd').nth(3).textContent(), { timeout: 15_000 }).toBe('On');
    expect(await member.getByRole('img', { name: 'QR code of the authenticator secret' }).count()).toBe(0);
    // the recovery codes are shown once, right after turning the factor on
    const recoveryCodes = await member.getByRole('region', { name: 'Recovery codes' }).locator('li').allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    expect(await member.locator('dd').nth(4).textContent()).toBe('10');

    await member.getByRole('button', { name: 'Sign out', exact: true }).click();
    await member.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    expect(await member.context().cookies()).toHaveLength(0);
    await member.goto(`${server.url}/app/${slug}/account`);
    await member.getByRole('heading', { name: 'Sign in', exact: true }).waitFor(); // no session any more

    await member.getByLabel('Email').fill(memberEmail);
    await member.getByLabel('Password').fill(PASSWORD);
    await member.getByRole('button', { name: 'Sign in' }).click();
    await member.getByLabel('Authenticator code').fill(memberAuthenticator.wrongCode());
    await member.getByRole('button', { name: 'Verify', exact: true }).click();
    await member.getByRole('alert').waitFor();
    await member.getByLabel('Authenticator code').fill(await memberAuthenticator.nextCode());
    await member.getByRole('button', { name: 'Verify', exact: true }).click();
    await member.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    await shoot(member, 'account-phone');

    // a recovery code instead of the authenticator, once; the account page then counts 9 left
    await member.getByRole('button', { name: 'Sign out', exact: true }).click();
    await member.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await member.getByLabel('Email').fill(memberEmail);
    await member.getByLabel('Password').fill(PASSWORD);
    await member.getByRole('button', { name: 'Sign in' }).click();
    await member.getByLabel('Recovery code').fill(recoveryCodes[0]!);
    await member.getByRole('button', { name: 'Use recovery code' }).click();
    await member.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    await expect.poll(() => member.locator('dd').nth(4).textContent(), { timeout: 15_000 }).toBe('9');
    const devices = member.getByRole('list', { name: 'Signed-in devices' });
    await devices.getByText('(this device)').waitFor();
    expect(await devices.getByText('Password + recovery code').count()).toBeGreaterThan(0);
  });

  it('invites a colleague from the console; the colleague accepts from the mailed link and shows in the users list', async () => {
    diagnoseOnFailure('5');
    await admin.getByRole('link', { name: 'Admin console' }).click();
    await admin.getByRole('link', { name: 'Invites' }).click();
    await admin.getByLabel('Email').fill(colleagueEmail);
    await admin.getByLabel('Role').selectOption('Member');
    await admin.getByLabel('Valid for (hours)').fill('48');
    await admin.getByRole('button', { name: 'Send invite' }).click();
    await admin.getByLabel('Invite link').waitFor();
    await admin.getByRole('cell', { name: colleagueEmail, exact: true }).waitFor();
    await shoot(admin, 'admin-invites-desktop');

    const first = await sink.waitFor(colleagueEmail, (m) => m.subject.startsWith('You are invited'));
    // the colleague lost the mail: the admin sends it again; only the new link works
    await admin.getByRole('button', { name: `Send the invite to ${colleagueEmail} again` }).click();
    await admin.getByText(`A new invitation was mailed to ${colleagueEmail}; the previous link no longer works.`).waitFor();
    const mail = await sink.waitFor(colleagueEmail, (m) => m.subject.startsWith('You are invited') && m.text !== first.text);
    const link = linkIn(mail.text);
    expect(link).not.toBe(linkIn(first.text));
    expect(new URL(link).pathname).toBe(`/app/${slug}/accept-invite`);
    const colleague = await newPerson(PHONE);
    await colleague.goto(onServer(link));
    await colleague.getByRole('heading', { name: 'Join the workspace', exact: true }).waitFor();
    expect(new URL(colleague.url()).search).toBe(''); // the token leaves the address bar
    await colleague.getByLabel('Choose a password').fill(PASSWORD);
    await colleague.getByRole('button', { name: 'Accept invite' }).click();
    await colleague.getByRole('heading', { name: 'Your account', exact: true }).waitFor();

    await admin.getByRole('link', { name: 'Users' }).click();
    await admin.getByRole('cell', { name: colleagueEmail, exact: true }).waitFor();
    await admin.getByRole('cell', { name: memberEmail, exact: true }).waitFor();
    await shoot(admin, 'admin-users-desktop');

    // the admin ends the colleague's session from the console (on the colleague's page: the list's rows
    // carry no buttons, each email links to the page with the actions); the colleague's page is signed out
    await admin.getByRole('link', { name: colleagueEmail, exact: true }).click();
    await admin.getByRole('heading', { name: `Sessions of ${colleagueEmail}` }).waitFor();
    await admin.getByRole('button', { name: 'End session' }).click();
    await admin.getByText('No live sessions.').waitFor();
    await colleague.reload();
    await colleague.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
  });

  it('creates an API key (plaintext shown once) and revokes it', async () => {
    diagnoseOnFailure('6');
    await admin.getByRole('link', { name: 'API keys' }).click();
    await admin.getByLabel('Name').fill('billing backend');
    await admin.getByRole('button', { name: 'Create key' }).click();
    const plaintext = await admin.getByLabel('New API key', { exact: true }).inputValue();
    expect(plaintext).toMatch(/^ak_live_/);
    const me = await fetch(`${server.url}/v1/${slug}/users`, { headers: { authorization: `Bearer ${plaintext}` } });
    expect(me.status).toBe(200);
    await shoot(admin, 'admin-api-keys-desktop');
    await admin.getByRole('button', { name: 'Revoke API key billing backend' }).click();
    await admin.getByRole('button', { name: 'Revoke API key billing backend' }).waitFor({ state: 'detached' });
    const refused = await fetch(`${server.url}/v1/${slug}/users`, { headers: { authorization: `Bearer ${plaintext}` } });
    expect(refused.status).toBe(401);
  });

  it('resets a password from the mailed link and signs in with the new one', async () => {
    diagnoseOnFailure('7');
    const person = await newPerson();
    await person.goto(`${server.url}/app/${slug}/sign-in`);
    await person.getByRole('link', { name: 'Forgot password?' }).click();
    await person.getByLabel('Email').fill(colleagueEmail);
    await person.getByRole('button', { name: 'Email me a reset link' }).click();
    await person.getByRole('status').waitFor();
    const mail = await sink.waitFor(colleagueEmail, (m) => m.subject.startsWith('Reset your password'));
    const link = linkIn(mail.text);
    expect(new URL(link).pathname).toBe(`/app/${slug}/reset-password`);
    await person.goto(onServer(link));
    await person.getByLabel('New password').fill('a brand new long passphrase');
    await person.getByRole('button', { name: 'Set new password' }).click();
    await person.getByRole('status').waitFor();
    await person.getByRole('link', { name: 'Sign in' }).click();
    await person.getByLabel('Email').fill(colleagueEmail);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.getByRole('alert').waitFor(); // the old password no longer works
    await person.getByLabel('Password').fill('a brand new long passphrase');
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
  });

  it('finds each of those actions in the audit page with a filter', async () => {
    diagnoseOnFailure('8');
    await admin.getByRole('link', { name: 'Audit log' }).click();
    // the filter and the table name each action in words (its identifier is the option's value and the cell's title)
    const labels = {
      TenantCreated: 'Workspace created', UserSignup: 'User signed up', MfaTotpEnrolled: 'Authenticator app set up', InviteCreated: 'Invitation sent',
      InviteAccepted: 'Invitation accepted', ApiKeyCreated: 'API key created', ApiKeyRevoked: 'API key revoked', UserPasswordChanged: 'Password changed',
    };
    for (const [action, label] of Object.entries(labels)) {
      await admin.getByLabel('Action').selectOption({ label });
      await admin.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(async () => [...new Set(await admin.locator('tbody tr td:nth-child(2)').allTextContents())], { timeout: 15_000 }).toEqual([label]);
      expect(await admin.locator('tbody tr td:nth-child(2) span').first().getAttribute('title')).toBe(action);
    }
    await admin.getByLabel('Action').selectOption('');
    // the user picker names people by email; actors and targets show emails, details read as text
    await admin.getByLabel('User', { exact: true }).selectOption({ label: colleagueEmail });
    await admin.getByRole('button', { name: 'Apply filters' }).click();
    await expect
      .poll(async () => (await admin.locator('tbody tr').allTextContents()).every((row) => row.includes(colleagueEmail)), { timeout: 15_000 })
      .toBe(true);
    await admin.getByRole('button', { name: `Events of ${colleagueEmail}` }).first().waitFor();
    const details = await admin.locator('tbody tr td.details').allTextContents();
    expect(details.join('\n')).not.toContain('{"');
    expect(details.join('\n')).toContain(`email: ${colleagueEmail}`);
    await admin.getByLabel('User', { exact: true }).selectOption('');
    await admin.getByLabel('Search').fill(colleagueEmail);
    await admin.getByLabel('Limit').fill('2');
    await admin.getByRole('button', { name: 'Apply filters' }).click();
    // the rows of the previous filter stay until the new answer replaces them: wait for the page of 2
    await expect.poll(() => admin.locator('tbody tr td.details').count(), { timeout: 15_000 }).toBe(2);
    const firstPage = await admin.locator('tbody tr td.details').allTextContents();
    await admin.getByRole('button', { name: 'Older' }).click();
    await admin.getByRole('button', { name: 'Newer' }).waitFor({ state: 'visible' });
    await expect.poll(() => admin.locator('tbody tr td.details').allTextContents()).not.toEqual(firstPage);
    // the filtered view (this colleague's events, today) exported as CSV and read back
    await admin.getByLabel('Search').fill('');
    await admin.getByLabel('Limit').fill('');
    await admin.getByLabel('User', { exact: true }).selectOption({ label: colleagueEmail });
    const today = new Date();
    const day = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    await admin.getByLabel('From', { exact: true }).fill(day);
    await admin.getByLabel('To', { exact: true }).fill(day);
    await admin.getByRole('button', { name: 'Apply filters' }).click();
    await expect
      .poll(async () => (await admin.locator('tbody tr').allTextContents()).every((row) => row.includes(colleagueEmail)), { timeout: 15_000 })
      .toBe(true);
    const shown = await admin.locator('tbody tr').count();
    const downloading = admin.waitForEvent('download');
    await admin.getByRole('button', { name: 'Export CSV' }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toMatch(new RegExp(`^audit-${slug}-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
    const rows = parseCsv(readFileSync((await download.path())!, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows.length).toBeGreaterThanOrEqual(shown);
    expect(rows.every((r) => r.actorEmail === colleagueEmail || r.targetEmail === colleagueEmail)).toBe(true);
    expect(rows.map((r) => r.action)).toContain('InviteAccepted');
    await shoot(admin, 'admin-audit-desktop');
    await admin.setViewportSize(PHONE);
    await shoot(admin, 'admin-audit-phone');
    await admin.setViewportSize(DESKTOP);
  });

  it('signs in with the identity provider from the sign-in page, then with the second factor once TOTP is on', async () => {
    diagnoseOnFailure('10');
    // the admin configures the client registered at the provider (redirect URI: the service's callback)
    const clientId = `client-${run}`;
    await provider.addClient(clientId, `secret-${run}-0123456789abcdef`, `${server.url}/v1/${slug}/oauth/idp/callback`);
    await admin.getByRole('link', { name: 'Settings' }).click();
    await admin.getByLabel('Client ID', { exact: true }).fill(clientId);
    await admin.getByLabel('Client secret', { exact: true }).fill(`secret-${run}-0123456789abcdef`);
    await admin.getByRole('button', { name: 'Save provider' }).click();
    await admin.getByText('Sign-in with the provider is on.').waitFor();
    // the settings show the redirect URI to register, exactly as the sign-in sends it
    await admin.getByText(`${server.url}/v1/${slug}/oauth/idp/callback`, { exact: true }).waitFor();

    const sub = `sub-${run}`;
    const email = `idp-${run}@example.com`;
    provider.setAccount(sub, { email, email_verified: true });
    const person = await newPerson(PHONE);
    // the provider's login and consent pages are played by the test helper; the browser is sent on to the callback
    const authorizationUrls: string[] = [];
    await person.route(`${provider.issuer}/**`, async (route) => {
      authorizationUrls.push(route.request().url());
      const callback = await provider.signIn(route.request().url(), sub);
      await route.fulfill({ status: 302, headers: { location: callback.toString() } });
    });
    await person.goto(`${server.url}/app/${slug}/sign-in`);
    await person.getByRole('button', { name: 'Sign in with the identity provider' }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    expect(new URL(person.url()).hash).toBe('');
    expect(await person.getByText(email).count()).toBe(1);
    expect(new URL(authorizationUrls[0]!).searchParams.get('redirect_uri')).toBe(`${server.url}/v1/${slug}/oauth/idp/callback`);
    const cookies = await person.context().cookies();
    // the provider-binding cookie is gone after the callback; the session's two remain
    expect(cookies.map((c) => c.name).sort()).toEqual([`refresh_${slug}`, `session_binding_${slug}`]);

    // with an authenticator, the provider sign-in (no multi-factor `amr`) asks for its code
    await person.getByRole('button', { name: 'Set up authenticator app' }).click();
    const authenticator = new Authenticator(await person.getByLabel('Secret').inputValue());
    await person.getByLabel('Authenticator code').fill(await authenticator.nextCode());
    await person.getByRole('button', { name: 'Turn on' }).click();
    await expect.poll(() => person.locator('dd').nth(3).textContent(), { timeout: 15_000 }).toBe('On');
    await person.getByRole('button', { name: 'Sign out', exact: true }).click();
    await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await person.getByRole('button', { name: 'Sign in with the identity provider' }).click();
    await person.getByRole('heading', { name: 'Second factor', exact: true }).waitFor();
    expect(new URL(person.url()).pathname).toBe(`/app/${slug}/idp-callback`);
    expect(new URL(person.url()).hash).toBe(''); // code and state left the address bar
    await shoot(person, 'idp-second-factor-phone');
    await person.getByLabel('Authenticator code').fill(authenticator.wrongCode());
    await person.getByRole('button', { name: 'Verify', exact: true }).click();
    await person.getByRole('alert').waitFor();
    await person.getByLabel('Authenticator code').fill(await authenticator.nextCode());
    await person.getByRole('button', { name: 'Verify', exact: true }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();

    await person.getByRole('button', { name: 'Sign out', exact: true }).click();
    await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await shoot(person, 'sign-in-idp-phone');
  });

  it('signs a new person in to a single-page application through the OpenID provider with the upstream identity provider', async () => {
    diagnoseOnFailure('10b');
    const rp = await registerRelyingParty(new Api(server.url), { slug, accessToken: await adminAccessToken(server.url, slug, adminEmail) }, server.url, 'spa', {
      redirectUris: [`http://localhost:${await freePort()}/callback`],
    });
    const sub = `sub-app-${run}`;
    const email = `idp-app-${run}@example.com`;
    provider.setAccount(sub, { email, email_verified: true });
    const person = await newPerson();
    await person.route(`${provider.issuer}/**`, async (route) => {
      const callback = await provider.signIn(route.request().url(), sub);
      await route.fulfill({ status: 302, headers: { location: callback.toString() } });
    });
    const tokens = await signInToApplication(person, rp, {}, async () => {
      await person.getByRole('button', { name: 'Sign in with the identity provider' }).click();
    });
    expect(tokens.claims()).toMatchObject({ iss: rp.issuer, aud: rp.clientId });
    // with the email scope and an access token, the address comes from userinfo (OpenID Connect Core §5.4)
    expect(await oidc.fetchUserInfo(rp.config, tokens.access_token, tokens.claims()!.sub)).toMatchObject({ email, email_verified: true });
    // the account page names the application under this device's session (docs/oidc.md "Sessions end everywhere")
    await person.goto(`${server.url}/app/${slug}/account`);
    await person.getByText('Signed in to App spa: signing out this device signs you out of them too.').waitFor();
  });

  it('under a Required MFA policy, a user without a factor proves the mailbox and sets up an authenticator at sign-in', async () => {
    diagnoseOnFailure('11');
    const email = `bootstrap-${run}@acme.test`;
    const person = await newPerson(PHONE);
    await person.goto(`${server.url}/app/${slug}/sign-up`);
    await person.getByLabel('Email').fill(email);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign up' }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    await person.getByRole('button', { name: 'Sign out', exact: true }).click();
    await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();

    await admin.getByRole('link', { name: 'Settings' }).click();
    await admin.getByLabel('Multi-factor authentication').selectOption('Required');
    // the console asks first and names who has no authenticator yet
    await admin.getByRole('button', { name: 'Save settings' }).click();
    expect(await answerConfirmation(admin, 'Require a second factor')).toContain(email);
    await admin.getByText('Settings saved.').waitFor();

    await person.getByLabel('Email').fill(email);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign in', exact: true }).click();
    await person.getByRole('heading', { name: 'Second factor', exact: true }).waitFor();
    expect(await person.getByLabel('Authenticator code').count()).toBe(0); // nothing enrolled: the mailbox first
    await person.getByRole('button', { name: 'Email me a code' }).click();
    await person.getByRole('status').waitFor();
    const mail = await sink.waitFor(email, (m) => m.subject.includes('sign-in code'));
    const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
    await shoot(person, 'mfa-bootstrap-email-phone');
    await person.getByLabel('Email code').fill(code);
    await person.getByRole('button', { name: 'Set up an authenticator instead' }).click();
    await person.getByRole('heading', { name: 'Set up your authenticator app', exact: true }).waitFor();
    await person.getByRole('img', { name: 'QR code of the authenticator secret' }).waitFor();
    await shoot(person, 'mfa-bootstrap-enrol-phone');
    const authenticator = new Authenticator(await person.getByLabel('Secret').inputValue());
    await person.getByLabel('Authenticator code').fill(authenticator.wrongCode());
    await person.getByRole('button', { name: 'Turn on and sign in' }).click();
    await person.getByRole('alert').waitFor();
    await person.getByLabel('Authenticator code').fill(await authenticator.nextCode());
    await person.getByRole('button', { name: 'Turn on and sign in' }).click();
    await person.getByRole('heading', { name: 'Your authenticator app is on', exact: true }).waitFor();
    expect(await person.getByRole('region', { name: 'Recovery codes' }).locator('li').count()).toBe(10);
    await person.getByRole('button', { name: 'I saved my recovery codes, continue' }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    expect(await person.locator('dd').nth(3).textContent()).toBe('On');

    await admin.getByLabel('Multi-factor authentication').selectOption('Optional');
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Settings saved.').waitFor();
  });

  it('pages the users list with "Load more" (GET users limit + cursor)', async () => {
    diagnoseOnFailure('12');
    for (let i = 0; i < 8; i += 1) {
      const res = await fetch(`${server.url}/v1/${slug}/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `paged-${i}-${run}@acme.test`, password: PASSWORD }),
      });
      expect(res.status).toBe(200);
    }
    await admin.getByRole('link', { name: 'Users' }).click();
    await admin.getByLabel('Per page').selectOption('10');
    await expect.poll(() => admin.locator('tbody tr').count()).toBe(10);
    await admin.getByText('10 users shown; more to load.').waitFor();
    const firstPage = await admin.locator('tbody tr td:first-child').allTextContents();
    await admin.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => admin.locator('tbody tr').count()).toBeGreaterThan(10);
    await admin.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' });
    const all = await admin.locator('tbody tr td:first-child').allTextContents();
    expect(all.slice(0, 10)).toEqual(firstPage);
    expect(new Set(all).size).toBe(all.length); // no user twice
    expect(all).toEqual(expect.arrayContaining([adminEmail, memberEmail, colleagueEmail, `paged-7-${run}@acme.test`]));
    await admin.getByText(`${all.length} users, all shown.`).waitFor();
    await admin.setViewportSize(PHONE);
    await shoot(admin, 'admin-users-paged-phone');
    await admin.setViewportSize(DESKTOP);
  });

  it('adds a passkey on the account page (Chromium virtual authenticator), signs out, and signs in with the passkey alone', async () => {
    diagnoseOnFailure('13');
    // WebAuthn needs a domain as RP id (not an IP address): a second instance whose PUBLIC_URL is on localhost
    const port = await freePort();
    const local = await startTestServer({ SMTP_URL: sink.url, PORT: String(port), PUBLIC_URL: `http://localhost:${port}` });
    try {
      const person = await newPerson();
      const cdp = await person.context().newCDPSession(person);
      await cdp.send('WebAuthn.enable');
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      });
      const email = `passkey-${run}@acme.test`;
      await person.goto(`http://localhost:${port}/`);
      await person.getByLabel('Workspace name').fill(`Passkeys ${run}`);
      await person.getByLabel('Your email').fill(email);
      await person.getByLabel('Password').fill(PASSWORD);
      await person.getByRole('button', { name: 'Create workspace' }).click();
      await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      const passkeySlug = new URL(person.url()).pathname.split('/')[2]!;

      await person.getByLabel('Passkey name (optional)').fill('Virtual key');
      await person.getByRole('button', { name: 'Add a passkey' }).click();
      await person.getByRole('button', { name: 'Delete passkey Virtual key' }).waitFor();
      expect(await person.getByLabel('Passkey name (optional)').inputValue()).toBe('');
      await shoot(person, 'account-passkey-desktop');

      await person.getByRole('button', { name: 'Sign out', exact: true }).click();
      await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      await person.getByRole('button', { name: 'Use a passkey' }).click();
      await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      expect(person.url()).toBe(`http://localhost:${port}/app/${passkeySlug}/account`);
      const logins = (await local.services.orm.em.fork().execute(
        `select details from audit_event where action = 'UserLogin' and tenant_id = (select id from tenant where slug = ?)`,
        [passkeySlug],
      )) as { details: Record<string, unknown> | string }[];
      expect(logins.map((r) => (typeof r.details === 'string' ? JSON.parse(r.details) : r.details).method)).toContain('passkey');

      // the same page opened on 127.0.0.1 cannot use a passkey bound to localhost: it says where to go
      const elsewhere = await newPerson();
      await elsewhere.goto(`http://127.0.0.1:${port}/app/${passkeySlug}/sign-in`);
      await elsewhere.getByRole('button', { name: 'Use a passkey' }).click();
      await elsewhere.getByRole('alert').waitFor();
      expect(await elsewhere.getByRole('alert').textContent()).toContain(`work on localhost only`);
      expect(await elsewhere.getByRole('alert').textContent()).toContain(`Open http://localhost:${port}/app/${passkeySlug}/sign-in`);
      await shoot(elsewhere, 'passkey-wrong-host-desktop');

      // the same passkey signs the person in to an application through the workspace's OpenID provider
      const publicUrl = `http://localhost:${port}`;
      const rp = await registerRelyingParty(new Api(publicUrl), { slug: passkeySlug, accessToken: await adminAccessToken(publicUrl, passkeySlug, email) }, publicUrl, 'web', {
        redirectUris: [`http://localhost:${await freePort()}/callback`],
      });
      const tokens = await signInToApplication(person, rp, { prompt: 'login' }, async () => {
        await person.getByRole('button', { name: 'Use a passkey' }).click();
      });
      expect(tokens.claims()).toMatchObject({ iss: rp.issuer, aud: rp.clientId });
      expect(await oidc.fetchUserInfo(rp.config, tokens.access_token, tokens.claims()!.sub)).toMatchObject({ email });
    } finally {
      await local.close();
    }
  });

  it('signs in to the example app (openid-client) through the workspace\'s hosted page, with password then TOTP, calls its API, refreshes and signs out', async () => {
    diagnoseOnFailure('14');
    // the workspace owner creates the workspace and registers the app in the console
    const owner = await newPerson();
    await owner.goto(`${server.url}/`);
    await owner.getByLabel('Workspace name').fill(`Apps ${run}`);
    await owner.getByLabel('Your email').fill(`apps-${run}@acme.test`);
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Create workspace' }).click();
    await owner.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    const tenant = { tenant: { slug: new URL(owner.url()).pathname.split('/')[2]! } };
    const appPort = await freePort();
    await owner.goto(`${server.url}/app/${tenant.tenant.slug}/admin/applications`);
    await owner.getByRole('heading', { name: 'Applications', exact: true }).waitFor();
    await owner.getByLabel(/Web application/).check();
    await owner.getByLabel('Name', { exact: true }).fill('Example app');
    await owner.getByLabel('Redirect URIs (one per line)').fill(`http://localhost:${appPort}/callback`);
    await owner.getByLabel('Post-logout redirect URIs (one per line, optional)').fill(`http://localhost:${appPort}/`);
    await owner.getByRole('button', { name: 'Add application' }).click();
    await owner.getByLabel('Client secret', { exact: true }).waitFor();
    const clientSecret = await owner.getByLabel('Client secret', { exact: true }).inputValue();
    const application = { clientId: await owner.locator('.created').getByLabel('Client ID', { exact: true }).inputValue() };
    expect(await owner.locator('.created').getByLabel('Issuer', { exact: true }).inputValue()).toBe(`${server.url}/v1/${tenant.tenant.slug}/oidc`);
    await shoot(owner, 'admin-applications-desktop');
    await owner.setViewportSize(PHONE);
    await shoot(owner, 'admin-applications-phone');
    // the app's API registered as an API resource, its permission `api` granted to the owner through a role
    {
      const api = new Api(server.url);
      const token = await adminAccessToken(server.url, tenant.tenant.slug, `apps-${run}@acme.test`);
      const apiUrl = `http://localhost:${appPort}/api`;
      expect((await api.post(`/v1/${tenant.tenant.slug}/api-resources`, { name: 'Example API', identifier: apiUrl, permissions: [{ name: 'api' }] }, { token })).status).toBe(200);
      const role = await api.post(`/v1/${tenant.tenant.slug}/roles`, { name: 'API user', permissions: [{ resource: apiUrl, permission: 'api' }] }, { token });
      const me = await api.get(`/v1/${tenant.tenant.slug}/me`, { token });
      expect((await api.put(`/v1/${tenant.tenant.slug}/users/${me.body.id}/roles`, { roleIds: [role.body.role.id] }, { token })).status).toBe(200);
    }
    const example = spawn(process.execPath, [path.resolve('examples/oidc-express-app/server.mjs')], {
      env: { ...process.env, ISSUER: `${server.url}/v1/${tenant.tenant.slug}/oidc`, CLIENT_ID: application.clientId, CLIENT_SECRET: clientSecret, PORT: String(appPort) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        example.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('example app on') && resolve());
        example.once('exit', (code) => reject(new Error(`example app exited with ${code}`)));
      });
      const person = await newPerson();
      await person.goto(`http://localhost:${appPort}/`);
      await person.getByRole('link', { name: 'Sign in' }).click();
      // the workspace's hosted sign-in page, naming the application
      await person.getByText('Sign in to continue to').waitFor();
      expect(new URL(person.url()).pathname).toBe(`/app/${tenant.tenant.slug}/sign-in`);
      await shoot(person, 'oidc-sign-in-desktop');
      await person.getByLabel('Email').fill(`apps-${run}@acme.test`);
      await person.getByLabel('Password').fill(PASSWORD);
      await person.getByRole('button', { name: 'Sign in', exact: true }).click();
      await person.locator('#email').waitFor();
      expect(await person.locator('#email').textContent()).toBe(`apps-${run}@acme.test`);
      expect(JSON.parse((await person.locator('#claims').textContent())!)).toMatchObject({ iss: `${server.url}/v1/${tenant.tenant.slug}/oidc`, aud: application.clientId });

      await person.getByRole('link', { name: 'Call the API' }).click();
      expect(JSON.parse((await person.locator('#api').textContent())!)).toMatchObject({ scope: 'api', client_id: application.clientId });
      await person.goto(`http://localhost:${appPort}/refresh`);
      expect(await person.locator('#refreshed').textContent()).toContain('new refresh token');

      // single sign-on: a second sign-in from the app does not ask again
      await person.goto(`http://localhost:${appPort}/login`);
      await person.locator('#email').waitFor();

      await person.goto(`http://localhost:${appPort}/logout`);
      await person.getByRole('button', { name: 'Sign out' }).click();
      await person.getByText('You are not signed in.').waitFor();

      // now with TOTP on: the hosted page asks for the code before going back to the app
      const signIn = await fetch(`${server.url}/v1/${tenant.tenant.slug}/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `apps-${run}@acme.test`, password: PASSWORD }),
      });
      const fresh = (await signIn.json()) as { accessToken: string };
      const enroll = (await (await fetch(`${server.url}/v1/${tenant.tenant.slug}/mfa/totp/enroll`, { method: 'POST', headers: { authorization: `Bearer ${fresh.accessToken}` } })).json()) as { secret: string };
      const authenticator = new Authenticator(enroll.secret);
      const verified = await fetch(`${server.url}/v1/${tenant.tenant.slug}/mfa/totp/verify`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${fresh.accessToken}` }, body: JSON.stringify({ code: await authenticator.nextCode() }),
      });
      expect(verified.status).toBe(200);
      const second = await newPerson(PHONE);
      await second.goto(`http://localhost:${appPort}/login`);
      await second.getByLabel('Email').fill(`apps-${run}@acme.test`);
      await second.getByLabel('Password').fill(PASSWORD);
      await second.getByRole('button', { name: 'Sign in', exact: true }).click();
      await second.getByLabel('Authenticator code').fill(await authenticator.nextCode());
      await shoot(second, 'oidc-second-factor-phone');
      await second.getByRole('button', { name: 'Verify' }).click();
      await second.locator('#email').waitFor();
      expect(JSON.parse((await second.locator('#claims').textContent())!).sub).toBeTruthy();
    } finally {
      example.kill();
    }
  });

  it('opens the console on activity charts drawn from the sign-ins so far', async () => {
    diagnoseOnFailure('14b');
    const token = await adminAccessToken(server.url, slug, adminEmail);
    const activity = (await (await fetch(`${server.url}/v1/${slug}/audit/activity`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      signIns: { count: number }[];
      failedSignIns: { count: number }[];
    };
    await admin.goto(`${server.url}/app/${slug}/admin`);
    await admin.getByRole('heading', { name: 'Activity', exact: true }).waitFor();
    await expect.poll(() => admin.title()).toBe(`Activity · Acme ${run}`);
    const signIns = activity.signIns.reduce((sum, d) => sum + d.count, 0);
    const failed = activity.failedSignIns.reduce((sum, d) => sum + d.count, 0);
    expect(signIns).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0); // the old password was tried after the reset
    await expect.poll(() => admin.getByTestId('sign-ins-summary').textContent()).toContain(`${signIns} sign-ins and ${failed} failed sign-ins in 30 days`);
    // Recharts drew both series and the sign-up bars
    await admin.locator('.recharts-line').nth(1).waitFor();
    expect(await admin.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await shoot(admin, 'admin-activity-desktop');
    await admin.setViewportSize(PHONE);
    await shoot(admin, 'admin-activity-phone');
    await admin.setViewportSize(DESKTOP);
  });

  it('finds a member by search, suspends them (their open session ends at once) and reactivates them, and promotes a colleague, each after a confirmation naming them', async () => {
    diagnoseOnFailure('15');
    await admin.goto(`${server.url}/app/${slug}/admin/users`);
    await admin.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await expect.poll(() => admin.title()).toBe(`Users · Acme ${run}`);
    await admin.getByLabel('Search by email').fill(memberEmail.slice(0, 12));
    await admin.getByRole('cell', { name: memberEmail, exact: true }).waitFor();
    await expect.poll(() => admin.getByRole('cell', { name: colleagueEmail, exact: true }).count()).toBe(0);
    await shoot(admin, 'admin-users-search-desktop');

    // the member's page: who they are, their factors and sessions, their events, and the actions
    await admin.getByRole('link', { name: memberEmail, exact: true }).click();
    await admin.getByRole('heading', { name: memberEmail, exact: true }).waitFor();
    await expect.poll(() => admin.title()).toBe(`${memberEmail} · Acme ${run}`);
    await admin.getByRole('heading', { name: `Sessions of ${memberEmail}` }).waitFor();
    await admin.getByRole('heading', { name: 'Recent events' }).waitFor();
    await admin.getByRole('cell', { name: 'User signed up', exact: true }).waitFor();
    expect(await admin.locator('.facts').textContent()).toMatch(/Authenticator appOn/);
    await shoot(admin, 'admin-user-page-desktop');
    await admin.setViewportSize(PHONE);
    await shoot(admin, 'admin-user-page-phone');
    await admin.setViewportSize(DESKTOP);

    await member.goto(`${server.url}/app/${slug}/account`);
    await member.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    await admin.getByRole('button', { name: `Suspend ${memberEmail}` }).click();
    expect(await answerConfirmation(admin, 'Suspend user')).toContain(memberEmail);
    await admin.getByText(`${memberEmail} is suspended; their sessions have ended.`).waitFor();
    await expect.poll(() => admin.locator('.facts').textContent()).toMatch(/StatusSuspended/);
    await member.reload();
    await member.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();

    await admin.getByRole('button', { name: `Reactivate ${memberEmail}` }).click();
    await admin.getByText(`${memberEmail} can sign in again.`).waitFor();
    await expect.poll(() => admin.locator('.facts').textContent()).toMatch(/StatusActive/);
    await admin.getByRole('link', { name: '← All users' }).click();
    await admin.getByRole('heading', { name: 'Users', exact: true }).waitFor();

    await admin.getByLabel('Search by email').fill(colleagueEmail);
    await admin.getByRole('cell', { name: colleagueEmail, exact: true }).waitFor();
    await admin.getByRole('link', { name: colleagueEmail, exact: true }).click();
    await admin.getByRole('button', { name: `Make Admin: ${colleagueEmail}` }).click();
    expect(await answerConfirmation(admin, 'Make Admin')).toContain(colleagueEmail);
    await admin.getByText(`${colleagueEmail} is now an Admin.`).waitFor();
    await admin.getByRole('link', { name: '← All users' }).click();
    await admin.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await admin.getByLabel('Role', { exact: true }).selectOption('Admin');
    await admin.getByRole('cell', { name: colleagueEmail, exact: true }).waitFor();
    await admin.setViewportSize(PHONE);
    await shoot(admin, 'admin-users-actions-phone');
    await admin.setViewportSize(DESKTOP);
  });

  it('closes sign-up to one email domain in the settings; the hosted sign-up page refuses another domain', async () => {
    diagnoseOnFailure('16');
    await admin.goto(`${server.url}/app/${slug}/admin/settings`);
    await admin.getByLabel('Who may sign up').selectOption('Domains');
    await admin.getByLabel('Sign-up email domains').fill('acme.test');
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Settings saved.').waitFor();

    const outsider = await newPerson(PHONE);
    await outsider.goto(`${server.url}/app/${slug}/sign-up`);
    // the page names the domains before anyone types an address
    await outsider.getByText('Sign-up is open to addresses at acme.test.').waitFor();
    await outsider.getByLabel('Email').fill(`outsider-${run}@elsewhere.example`);
    await outsider.getByLabel('Password').fill(PASSWORD);
    await outsider.getByRole('button', { name: 'Sign up' }).click();
    await outsider.getByRole('alert').waitFor();
    expect(await outsider.getByRole('alert').textContent()).toMatch(/domain/i);
    await shoot(outsider, 'sign-up-domain-refused-phone');
    await outsider.getByLabel('Email').fill(`insider-${run}@acme.test`);
    await outsider.getByRole('button', { name: 'Sign up' }).click();
    await outsider.getByRole('heading', { name: 'Your account', exact: true }).waitFor();

    await admin.getByLabel('Who may sign up').selectOption('Open');
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Settings saved.').waitFor();
  });

  it('under InviteOnly the hosted pages offer no sign-up; an unknown workspace shows a not-found page; "Open a workspace" turns a name into its slug', async () => {
    diagnoseOnFailure('16b');
    await admin.goto(`${server.url}/app/${slug}/admin/settings`);
    await admin.getByLabel('Who may sign up').selectOption('InviteOnly');
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Settings saved.').waitFor();

    const visitor = await newPerson(PHONE);
    await visitor.goto(`${server.url}/app/${slug}/sign-in`);
    await visitor.getByRole('link', { name: 'Forgot password?' }).waitFor();
    expect(await visitor.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
    // the sign-up address itself explains instead of offering a form that could only fail
    await visitor.goto(`${server.url}/app/${slug}/sign-up`);
    await visitor.getByText('This workspace takes new members by invitation only.', { exact: false }).waitFor();
    expect(await visitor.getByRole('button', { name: 'Sign up' }).count()).toBe(0);
    expect(await visitor.getByLabel('Password').count()).toBe(0);
    await shoot(visitor, 'sign-up-invite-only-phone');

    await admin.getByLabel('Who may sign up').selectOption('Open');
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Settings saved.').waitFor();

    await visitor.goto(`${server.url}/app/no-such-${run}/sign-in`);
    await visitor.getByRole('heading', { name: 'No workspace here' }).waitFor();
    expect(await visitor.getByLabel('Email').count()).toBe(0);
    expect(await visitor.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    await shoot(visitor, 'workspace-not-found-phone');
    await visitor.getByRole('link', { name: 'Open a workspace' }).click();
    await visitor.getByLabel('Workspace address').fill(`  Acme ${run.toUpperCase()} `);
    await visitor.getByRole('button', { name: 'Go to sign-in' }).click();
    await visitor.waitForURL(`${server.url}/app/${slug}/sign-in`);
    await visitor.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  });

  it('adds users from the console: refused a common password with its reason, then signs in at once; without a password, mailed a link', async () => {
    diagnoseOnFailure('16c');
    const added = `added-${run}@acme.test`;
    const mailed = `mailed-${run}@acme.test`;
    await admin.goto(`${server.url}/app/${slug}/admin/users`);
    await admin.getByRole('heading', { name: 'Add a user' }).waitFor();
    await admin.getByLabel('Email of the new user').fill(added);
    await admin.getByLabel('Password (optional)').fill('qwerty123456');
    await admin.getByRole('button', { name: 'Add user' }).click();
    await admin.getByRole('alert').waitFor();
    expect(await admin.locator('.field-error').first().textContent()).toBe('This password is one of the most common ones and easy to guess. Choose another.');
    await admin.getByLabel('Password (optional)').fill(PASSWORD);
    await admin.getByRole('button', { name: 'Add user' }).click();
    await admin.getByText(`${added} was added and can sign in now.`).waitFor();
    expect(await admin.getByLabel('Email of the new user').inputValue()).toBe(''); // the form is ready for the next one
    await admin.getByRole('cell', { name: added, exact: true }).waitFor();

    await admin.getByLabel('Email of the new user').fill(mailed);
    await admin.getByLabel('Role of the new user').selectOption('Admin');
    await admin.getByRole('button', { name: 'Add user' }).click();
    await admin.getByText(`${mailed} was added; we mailed them a link to set a password.`).waitFor();
    const mail = await sink.waitFor(mailed, (m) => m.subject.startsWith('Reset your password'));
    expect(linkIn(mail.text)).toContain('/reset-password?token=');
    await admin.setViewportSize(PHONE);
    await shoot(admin, 'admin-users-add-phone');
    await admin.setViewportSize(DESKTOP);

    const person = await newPerson();
    await person.goto(`${server.url}/app/${slug}/sign-in`);
    await person.getByLabel('Email').fill(added);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign in', exact: true }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
  });

  it('sets the workspace\'s password policy in the console; the sign-up page says the new minimum and the service holds to it', async () => {
    diagnoseOnFailure('16d');
    await admin.goto(`${server.url}/app/${slug}/admin/settings`);
    await admin.getByRole('heading', { name: 'Policies' }).waitFor();
    await admin.getByLabel('Minimum length (characters)').fill('30');
    await admin.getByRole('button', { name: 'Save policies' }).click();
    await admin.getByText('Policies saved.').waitFor();
    const visitor = await newPerson();
    await visitor.goto(`${server.url}/app/${slug}/sign-up`);
    await visitor.getByText('At least 30 characters; not one of the most common passwords.').waitFor();
    await visitor.getByLabel('Email').fill(`policy-${run}@acme.test`);
    await visitor.getByLabel('Password').fill(PASSWORD);
    await visitor.getByRole('button', { name: 'Sign up' }).click();
    await visitor.getByRole('alert').waitFor();
    expect(await visitor.locator('.field-error').first().textContent()).toBe('Use at least 30 characters.');
    await admin.getByLabel('Minimum length (characters)').fill('12');
    await admin.getByRole('button', { name: 'Save policies' }).click();
    await admin.getByText('Policies saved.').waitFor();
  });

  it('adds a webhook endpoint in the console (secret shown once), sends a test event and sees its delivery in the log', async () => {
    diagnoseOnFailure('17');
    const receiver = await startWebhookReceiver();
    try {
      await admin.goto(`${server.url}/app/${slug}/admin/webhooks`);
      await admin.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
      await expect.poll(() => admin.title()).toBe(`Webhooks · Acme ${run}`); // each page has its own title
      await admin.getByLabel('Endpoint URL').fill(receiver.url);
      await admin.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = await admin.getByLabel('Signing secret', { exact: true }).inputValue();
      expect(secret).toMatch(/^whsec_/);
      receiver.secrets.push(secret);
      await admin.getByRole('button', { name: `Send a test event to ${receiver.url}` }).click();
      await admin.getByText(`A test event is on its way to ${receiver.url}.`).waitFor();
      await receiver.waitFor(1);
      await admin.getByRole('button', { name: `Deliveries and events of ${receiver.url}` }).click();
      await admin.getByRole('cell', { name: /Succeeded/ }).first().waitFor({ timeout: 20_000 });
      await shoot(admin, 'admin-webhooks-desktop');
      await admin.setViewportSize(PHONE);
      await shoot(admin, 'admin-webhooks-phone');
      await admin.setViewportSize(DESKTOP);
      await admin.getByRole('button', { name: `Delete ${receiver.url}` }).click();
      await answerConfirmation(admin, 'Delete endpoint');
      await admin.getByText(`${receiver.url} was deleted.`).waitFor();
    } finally {
      await receiver.stop();
    }
  });

  it('on the account page: resends the verification link, changes the sign-in email through the link mailed to the new address (the old one is told), turns the authenticator off, names devices', async () => {
    diagnoseOnFailure('16');
    const owner = `account-${run}@acme.test`;
    const newAddress = `renamed-${run}@acme.test`;
    const api = new Api(server.url);
    const created = await api.post('/v1/tenants', { tenant: { name: `Accounts ${run}` }, admin: { email: owner, password: PASSWORD } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const accountSlug = created.body.tenantSlug as string;
    const person = await newPerson();
    await person.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await person.goto(`${server.url}/app/${accountSlug}/sign-in`);
    await person.getByLabel('Email').fill(owner);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();

    // the address is not verified yet: the page says so and mails a new link on request
    expect(await person.locator('dd').first().textContent()).toBe(`${owner} Not verified`);
    await person.getByRole('button', { name: 'Resend verification link' }).click();
    await person.getByText(`We sent a new verification link to ${owner}`).waitFor();
    const verification = await sink.waitFor(owner, (m) => m.subject.startsWith('Confirm your email address'));
    expect(new URL(linkIn(verification.text)).pathname).toBe(`/app/${accountSlug}/verify-email`);

    // the session list names the browser and system instead of the raw user agent
    const device = person.getByRole('list', { name: 'Signed-in devices' }).locator('li strong').first();
    expect(await device.textContent()).toMatch(/^Chrome( Headless)? \d+ on Linux/);
    expect(await device.getAttribute('title')).toContain('Mozilla/5.0');

    // change email: the link goes to the new address, the old address is told once it is done
    const changeEmail = person.getByRole('region', { name: 'Change email' });
    await changeEmail.getByLabel('New email').fill(newAddress);
    await changeEmail.getByLabel('Current password').fill(PASSWORD);
    await changeEmail.getByRole('button', { name: 'Send confirmation link' }).click();
    await changeEmail.getByText(`We sent a confirmation link to ${newAddress}`).waitFor();
    const confirmation = await sink.waitFor(newAddress, (m) => m.subject.startsWith('Confirm your new email address'));
    const confirmLink = linkIn(confirmation.text);
    expect(new URL(confirmLink).pathname).toBe(`/app/${accountSlug}/confirm-email`);
    await person.goto(onServer(confirmLink));
    await person.getByRole('button', { name: 'Confirm my new email address' }).click();
    await person.getByText(`Your sign-in email is now ${newAddress}.`).waitFor();
    await shoot(person, 'confirm-email-desktop');
    const notice = await sink.waitFor(owner, (m) => m.subject.startsWith('Your sign-in email was changed'));
    expect(notice.text).toContain('r***@acme.test');
    await person.getByRole('link', { name: 'Your account' }).click();
    await expect.poll(() => person.locator('dd').first().textContent(), { timeout: 15_000 }).toBe(`${newAddress} Verified`);

    // an authenticator, its recovery codes copied and downloaded, then turned off after a confirmation
    await person.getByRole('button', { name: 'Set up authenticator app' }).click();
    const authenticator = new Authenticator(await person.getByLabel('Secret').inputValue());
    await person.getByLabel('Authenticator code').fill(await authenticator.nextCode());
    await person.getByRole('button', { name: 'Turn on' }).click();
    const codesRegion = person.getByRole('region', { name: 'Recovery codes' });
    await expect.poll(() => codesRegion.locator('li').count(), { timeout: 15_000 }).toBe(10);
    const codes = await codesRegion.locator('li').allTextContents();
    expect(codes).toHaveLength(10);
    await codesRegion.getByRole('button', { name: 'Copy codes' }).click();
    await codesRegion.getByText('Recovery codes copied.').waitFor();
    expect(await person.evaluate<string>('navigator.clipboard.readText()')).toBe(codes.join('\n'));
    const [download] = await Promise.all([person.waitForEvent('download'), codesRegion.getByRole('button', { name: 'Download as .txt' }).click()]);
    expect(download.suggestedFilename()).toBe(`recovery-codes-${accountSlug}.txt`);
    const saved = await download.path();
    for (const code of codes) expect(readFileSync(saved, 'utf8')).toContain(code);
    await shoot(person, 'account-recovery-codes-desktop');

    await person.getByRole('button', { name: 'Turn off authenticator app' }).click();
    await person.getByRole('group', { name: 'Confirm turning off the authenticator app' }).getByRole('button', { name: 'Yes, turn it off' }).click();
    await expect.poll(() => person.locator('dd').nth(3).textContent(), { timeout: 15_000 }).toBe('Off');
    await person.getByRole('button', { name: 'Set up authenticator app' }).waitFor();
    await sink.waitFor(newAddress, (m) => m.subject.startsWith('Authenticator app removed'));

    // the new address signs in with the password alone
    await person.getByRole('button', { name: 'Sign out', exact: true }).click();
    await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await person.getByLabel('Email').fill(newAddress);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
  });

  it('offers a new verification link on the sign-in page when the address is not verified yet', async () => {
    diagnoseOnFailure('17');
    const email = `unverified-${run}@acme.test`;
    const api = new Api(server.url);
    const created = await api.post('/v1/tenants', { tenant: { name: `Verify ${run}` }, admin: { email: `owner-v-${run}@acme.test`, password: PASSWORD } });
    const verifySlug = created.body.tenantSlug as string;
    const turnedOn = await api.patch(`/v1/${verifySlug}/tenant`, { requireEmailVerification: true }, { token: created.body.accessToken as string });
    expect(turnedOn.status, JSON.stringify(turnedOn.body)).toBe(200);
    expect((await api.post(`/v1/${verifySlug}/auth/signup`, { email, password: PASSWORD })).status).toBe(200);
    await sink.waitFor(email, (m) => m.subject.startsWith('Confirm your email address'));

    const person = await newPerson(PHONE);
    await person.goto(`${server.url}/app/${verifySlug}/sign-in`);
    await person.getByLabel('Email').fill(email);
    await person.getByLabel('Password').fill(PASSWORD);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.getByRole('alert').waitFor();
    await person.getByRole('button', { name: 'Resend verification link' }).click();
    await person.getByText(`We sent a new verification link to ${email}`).waitFor();
    await shoot(person, 'sign-in-resend-verification-phone');
    await expect.poll(() => sink.messages.filter((m) => m.to.includes(email) && m.subject.startsWith('Confirm your email address')).length, { timeout: 15_000 }).toBe(2);
    const mails = sink.messages.filter((m) => m.to.includes(email) && m.subject.startsWith('Confirm your email address'));
    await person.goto(onServer(linkIn(mails[1]!.text)));
    await person.getByRole('button', { name: 'Verify my email' }).click();
    await person.getByText('Your email address is verified.').waitFor();
  });

  it('says how long to wait after too many failed sign-ins', async () => {
    diagnoseOnFailure('20');
    // the shared test server scales the budgets up; this one keeps the real ones
    const strict = await startTestServer({ RATE_LIMIT_SCALE: '1' });
    try {
      const workspace = await new Api(strict.url).post('/v1/tenants', {
        tenant: { name: `Limits ${run}` }, admin: { email: `limits-${run}@acme.test`, password: PASSWORD },
      });
      expect(workspace.status).toBe(200);
      const person = await newPerson(PHONE);
      await person.goto(`${strict.url}/app/${workspace.body.tenantSlug}/sign-in`);
      await person.getByLabel('Email').fill(`limits-${run}@acme.test`);
      await person.getByLabel('Password').fill('not the password at all');
      let text = '';
      for (let attempt = 0; attempt < 12 && !/Try again in/.test(text); attempt++) {
        await person.getByRole('button', { name: 'Sign in', exact: true }).click();
        await person.getByRole('alert').waitFor();
        await person.waitForTimeout(150);
        text = (await person.getByRole('alert').textContent()) ?? '';
      }
      expect(text).toMatch(/Too many attempts\. Try again in \d+ (second|minute|hour)s?\./);
      await shoot(person, 'sign-in-rate-limited-phone');
    } finally {
      await strict.close();
    }
  });

  it('follows the system\'s dark mode, and the theme switcher overrides it and is remembered', async () => {
    diagnoseOnFailure('21');
    const person = await newPerson();
    const background = () => person.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    await person.emulateMedia({ colorScheme: 'dark' });
    await person.goto(`${server.url}/app/${slug}/sign-in`);
    await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    expect(await background()).toBe('rgb(15, 20, 26)');
    await shoot(person, 'sign-in-dark-desktop');
    await person.setViewportSize(PHONE);
    await shoot(person, 'sign-in-dark-phone');
    await person.setViewportSize(DESKTOP);
    await person.getByLabel('Theme').selectOption('light');
    expect(await background()).toBe('rgb(246, 247, 249)');
    await person.emulateMedia({ colorScheme: 'light' });
    await person.getByLabel('Theme').selectOption('dark');
    expect(await background()).toBe('rgb(15, 20, 26)');
    await person.reload();
    await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    expect(await background()).toBe('rgb(15, 20, 26)'); // remembered
    await person.getByLabel('Theme').selectOption('system');
    expect(await background()).toBe('rgb(246, 247, 249)');
  });

  it('brands a workspace: the console previews the colour live, and its sign-in page shows the display name, logo and colour, accessible in both themes', async () => {
    diagnoseOnFailure('24');
    const owner = `brand-${run}@acme.test`;
    const tenantSlug = await createWorkspace(`Brand ${run}`, owner);
    const settings = await newPerson();
    await settings.goto(`${server.url}/app/${tenantSlug}/sign-in`);
    await settings.getByLabel('Email').fill(owner);
    await settings.getByLabel('Password').fill(PASSWORD);
    await settings.getByRole('button', { name: 'Sign in', exact: true }).click();
    await settings.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    await settings.goto(`${server.url}/app/${tenantSlug}/admin/settings`);
    const branding = settings.getByRole('region', { name: 'Branding' });
    await branding.waitFor();
    await branding.getByLabel('Display name').fill('Brandwerk Cloud');
    // a light colour: the preview shows it at once and says white text is too hard to read
    await branding.getByLabel('Button colour (hex)').fill('#ffcc00');
    await branding.getByText(/Too low: choose a darker colour/).waitFor();
    await branding.getByRole('button', { name: 'Save branding' }).click();
    await branding.getByText('White text on this colour is hard to read', { exact: false }).waitFor();
    await branding.getByLabel('Button colour (hex)').fill('#0f766e');
    await branding.getByText(/Readable\./).waitFor();
    expect(await branding.locator('.preview-button').evaluate(computedStyle, 'backgroundColor')).toBe('rgb(15, 118, 110)');
    await branding.getByLabel('Support link').fill('https://help.brandwerk.example/');
    await branding.getByRole('button', { name: 'Save branding' }).click();
    await branding.getByText('Branding saved.').waitFor();
    // choosing a file uploads it; a file the service would refuse is refused on the page, before anything is sent
    const uploads: string[] = [];
    settings.on('request', (request) => {
      if (request.url().includes('/trpc/tenant.set')) uploads.push(request.url());
    });
    await branding.getByLabel('Upload a logo', { exact: true }).setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') });
    await branding.getByText('This file is not a PNG, JPEG, WebP or GIF image.', { exact: false }).waitFor();
    await branding.getByLabel('Upload a logo', { exact: true }).setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: Buffer.concat([LOGO_PNG, Buffer.alloc(300 * 1024)]) });
    await branding.getByText('a logo may be at most 256 KB', { exact: false }).waitFor();
    expect(uploads).toEqual([]);
    await branding.getByLabel('Upload a logo', { exact: true }).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: LOGO_PNG });
    await branding.getByText('Logo saved.').waitFor();
    await branding.getByLabel('Upload a logo for the dark theme').setInputFiles({ name: 'logo-dark.gif', mimeType: 'image/gif', buffer: DARK_LOGO_GIF });
    await branding.getByText('Dark-theme logo saved.').waitFor();
    expect(uploads.map((url) => new URL(url).pathname)).toEqual(['/trpc/tenant.setLogo', '/trpc/tenant.setDarkLogo']);
    await shoot(settings, 'branding-console-desktop');
    for (const scheme of ['light', 'dark'] as const) {
      await settings.emulateMedia({ colorScheme: scheme });
      const result = await new AxeBuilder({ page: settings }).include('#branding').withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
      expect(result.violations.map((v) => `console ${scheme}: ${v.id}`)).toEqual([]);
    }
    await settings.setViewportSize(PHONE);
    await shoot(settings, 'branding-console-phone');
    await settings.setViewportSize(DESKTOP);
    await settings.emulateMedia({ colorScheme: 'light' });

    for (const [viewport, name] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
      const visitor = await newPerson(viewport);
      await visitor.goto(`${server.url}/app/${tenantSlug}/sign-in`);
      await visitor.locator('.brand-name', { hasText: 'Brandwerk Cloud' }).waitFor();
      await expect.poll(() => visitor.title()).toBe('Sign in · Brandwerk Cloud');
      const logo = visitor.locator('.brand-header img').first(); // the light theme's (the dark theme's is hidden)
      await expect.poll(() => logo.evaluate((img) => ((img as unknown as { complete: boolean }).complete ? (img as unknown as { naturalWidth: number }).naturalWidth : 0))).toBeGreaterThan(0);
      const button = visitor.getByRole('button', { name: 'Sign in', exact: true });
      expect(await button.evaluate(computedStyle, 'backgroundColor')).toBe('rgb(15, 118, 110)');
      expect(await button.evaluate(computedStyle, 'color')).toBe('rgb(255, 255, 255)');
      expect(await visitor.getByRole('link', { name: 'Help and support' }).getAttribute('href')).toBe('https://help.brandwerk.example/');
      await shoot(visitor, `branding-sign-in-${name}`);
      for (const scheme of ['light', 'dark'] as const) {
        await visitor.emulateMedia({ colorScheme: scheme });
        const result = await new AxeBuilder({ page: visitor }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
        expect(result.violations.map((v) => `${scheme} ${name}: ${v.id}`)).toEqual([]);
      }
      await shoot(visitor, `branding-sign-in-${name}-dark`);
    }

    // the logo is the tab's icon; the dark theme (system or switcher) shows the dark logo; secondary buttons take the colour where it stays readable
    const visitor = await newPerson();
    await visitor.emulateMedia({ colorScheme: 'light' });
    await visitor.goto(`${server.url}/app/${tenantSlug}/sign-in`);
    const header = visitor.locator('.brand-header');
    await expect.poll(() => header.evaluate(visibleLogoSource)).toBe('/branding/logo alt=');
    await expect.poll(() => visitor.locator('link[rel~="icon"]').getAttribute('href')).toMatch(new RegExp(`^/v1/${tenantSlug}/branding/logo\\?v=[0-9a-f]{16}$`));
    const passkey = visitor.getByRole('button', { name: 'Use a passkey' });
    expect(await passkey.evaluate(computedStyle, 'color')).toBe('rgb(15, 118, 110)');
    expect(await passkey.evaluate(computedStyle, 'borderTopColor')).toBe('rgb(15, 118, 110)');
    await visitor.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => header.evaluate(visibleLogoSource)).toBe('/branding/logo/dark alt=');
    // #0f766e on the dark surface is 2.97:1: text and border keep the dark theme's own colour
    expect(await passkey.evaluate(computedStyle, 'color')).toBe('rgb(124, 178, 255)');
    expect(await passkey.evaluate(computedStyle, 'borderTopColor')).toBe('rgb(124, 178, 255)');
    await visitor.emulateMedia({ colorScheme: 'light' });
    await visitor.getByLabel('Theme').selectOption('dark');
    await expect.poll(() => header.evaluate(visibleLogoSource)).toBe('/branding/logo/dark alt=');
    await visitor.getByLabel('Theme').selectOption('light');
    await expect.poll(() => header.evaluate(visibleLogoSource)).toBe('/branding/logo alt=');

    // "Logo only": the name leaves the header (it stays in the title and as the logo's alt text)
    await branding.getByLabel('Logo only').check();
    await branding.getByRole('button', { name: 'Save branding' }).click();
    await branding.getByText('Branding saved.').waitFor();
    await visitor.reload();
    await expect.poll(() => header.evaluate(visibleLogoSource)).toBe('/branding/logo alt=Brandwerk Cloud');
    expect(await visitor.locator('.brand-header .brand-name').count()).toBe(0);
    await expect.poll(() => visitor.title()).toBe('Sign in · Brandwerk Cloud');
    const phone = await newPerson(PHONE);
    await phone.goto(`${server.url}/app/${tenantSlug}/sign-in`);
    await phone.getByRole('img', { name: 'Brandwerk Cloud' }).first().waitFor();
    for (const scheme of ['light', 'dark'] as const) {
      await phone.emulateMedia({ colorScheme: scheme });
      const result = await new AxeBuilder({ page: phone }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
      expect(result.violations.map((v) => `logo only ${scheme}: ${v.id}`)).toEqual([]);
    }
    await shoot(phone, 'branding-logo-only-phone-dark');
    // "Name only": no logo in the header, still the tab's icon
    await branding.getByLabel('Name only').check();
    await branding.getByRole('button', { name: 'Save branding' }).click();
    await branding.getByText('Branding saved.').waitFor();
    await visitor.reload();
    await visitor.locator('.brand-header .brand-name', { hasText: 'Brandwerk Cloud' }).waitFor();
    expect(await visitor.locator('.brand-header img').count()).toBe(0);
    await expect.poll(() => visitor.locator('link[rel~="icon"]').getAttribute('href')).toContain('/branding/logo?v=');
  });

  it('speaks German to a German browser: sign-in, its errors, the password reset page and the account page with German dates', async () => {
    diagnoseOnFailure('25');
    const owner = `sprache-${run}@acme.test`;
    const tenantSlug = await createWorkspace(`Sprache ${run}`, owner);
    const person = await newPerson(DESKTOP, 'de-DE');
    await person.goto(`${server.url}/app/${tenantSlug}/sign-in`);
    await person.getByRole('heading', { name: 'Anmelden', exact: true }).waitFor();
    expect(await person.locator('html').getAttribute('lang')).toBe('de');
    await expect.poll(() => person.title()).toBe(`Anmelden · Sprache ${run}`);
    await person.getByLabel('E-Mail-Adresse').fill(owner);
    await person.getByLabel('Passwort', { exact: true }).fill('not the password at all');
    await person.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await person.getByRole('alert').getByText('E-Mail-Adresse oder Passwort stimmen nicht.').waitFor();
    await shoot(person, 'language-de-sign-in-desktop');

    await person.getByRole('link', { name: 'Passwort vergessen?' }).click();
    await person.getByRole('heading', { name: 'Passwort zurücksetzen' }).waitFor();
    await person.getByRole('button', { name: 'Link zum Zurücksetzen senden' }).waitFor();
    await person.goto(`${server.url}/app/${tenantSlug}/reset-password?token=${'x'.repeat(43)}`);
    await person.getByRole('heading', { name: 'Neues Passwort wählen' }).waitFor();
    await person.getByLabel('Neues Passwort').fill('short');
    await person.getByRole('button', { name: 'Neues Passwort speichern' }).click();
    // the workspace's password policy (password_too_short) in German, beside the field
    await person.locator('.field-error').getByText('Verwenden Sie mindestens 12 Zeichen.').waitFor();

    await person.goto(`${server.url}/app/${tenantSlug}/sign-in`);
    await person.getByLabel('E-Mail-Adresse').fill(owner);
    await person.getByLabel('Passwort', { exact: true }).fill(PASSWORD);
    await person.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await person.getByRole('heading', { name: 'Ihr Konto', exact: true }).waitFor();
    await person.getByRole('heading', { name: 'Sitzungen' }).waitFor();
    const sessionLine = await person.getByRole('list', { name: 'Angemeldete Geräte' }).locator('.hint').first().textContent();
    expect(sessionLine).toMatch(/angemeldet am \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}/);
    expect(await person.getByRole('list', { name: 'Angemeldete Geräte' }).locator('li strong').first().textContent()).toMatch(/ auf Linux/);
    await shoot(person, 'language-de-account-desktop');
    const scan = await new AxeBuilder({ page: person }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(scan.violations.map((v) => `de account: ${v.id}`)).toEqual([]);
    await person.setViewportSize(PHONE);
    await shoot(person, 'language-de-account-phone');
  });

  it('switches to French with the language switcher, remembers it, and uses the workspace\'s default for a browser whose language the pages lack', async () => {
    diagnoseOnFailure('26');
    const person = await newPerson(PHONE);
    await person.goto(`${server.url}/app/${slug}/sign-in`);
    await person.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await person.getByLabel('Language').selectOption('fr');
    await person.getByRole('heading', { name: 'Connexion', exact: true }).waitFor();
    expect(await person.locator('html').getAttribute('lang')).toBe('fr');
    await person.reload();
    await person.getByRole('heading', { name: 'Connexion', exact: true }).waitFor();
    await shoot(person, 'language-fr-sign-in-phone');
    await person.getByRole('link', { name: 'Mot de passe oublié ?' }).click();
    await person.getByRole('heading', { name: 'Réinitialiser votre mot de passe' }).waitFor();
    await person.goto(`${server.url}/app/${slug}/reset-password?token=${'x'.repeat(43)}`);
    await person.getByRole('heading', { name: 'Choisir un nouveau mot de passe' }).waitFor();
    // the switcher offers every language by its own name
    expect(await person.locator('#language-switcher option').allTextContents()).toEqual(['English', 'Deutsch', 'Français', 'Español']);

    // the account page in French: sign in through the French page
    await person.goto(`${server.url}/app/${slug}/sign-in`);
    await person.getByLabel('Adresse e-mail').fill(adminEmail);
    await person.getByLabel('Mot de passe', { exact: true }).fill(PASSWORD);
    await person.getByRole('button', { name: 'Se connecter', exact: true }).click();
    await person.getByRole('heading', { name: 'Votre compte', exact: true }).waitFor();
    await person.getByRole('heading', { name: 'Changer de mot de passe' }).waitFor();
    await shoot(person, 'language-fr-account-phone');

    // an Italian browser in a workspace whose default is German gets German; its switcher still wins
    const token = await adminAccessToken(server.url, slug, adminEmail);
    const patched = await fetch(`${server.url}/v1/${slug}/tenant`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ defaultLocale: 'de' }),
    });
    expect(patched.status).toBe(200);
    const italian = await newPerson(DESKTOP, 'it-IT');
    await italian.goto(`${server.url}/app/${slug}/sign-in`);
    await italian.getByRole('heading', { name: 'Anmelden', exact: true }).waitFor();
    await italian.getByLabel('Sprache').selectOption('en');
    await italian.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await fetch(`${server.url}/v1/${slug}/tenant`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ defaultLocale: 'en' }),
    });
  });

  it('shows the admin console in French to a French browser: navigation, users, invites, settings, and the audit log\'s dates', async () => {
    diagnoseOnFailure('27');
    const owner = `atelier-${run}@acme.test`;
    const tenantSlug = await createWorkspace(`Atelier ${run}`, owner);
    const page = await newPerson(DESKTOP, 'fr-FR');
    await page.goto(`${server.url}/app/${tenantSlug}/sign-in`);
    await page.getByLabel('Adresse e-mail').fill(owner);
    await page.getByLabel('Mot de passe', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Se connecter', exact: true }).click();
    await page.getByRole('heading', { name: 'Votre compte', exact: true }).waitFor();
    await page.getByRole('link', { name: 'Console d’administration' }).click();

    const nav = page.getByRole('navigation', { name: 'Console d’administration' });
    await nav.getByRole('link', { name: 'Utilisateurs' }).click();
    await page.getByRole('heading', { level: 1, name: 'Utilisateurs' }).waitFor();
    expect(await nav.getByRole('link').allTextContents()).toEqual(
      ['Activité', 'Utilisateurs', 'Invitations', 'Clés d’API', 'Applications', 'Ressources d’API', 'Rôles', 'Organisations', 'SSO entreprise', 'Webhooks', 'Paramètres', 'Journal d’audit'],
    );
    await page.getByRole('columnheader', { name: 'Utilisateur' }).waitFor();
    await page.getByRole('columnheader', { name: 'Dernière connexion' }).waitFor();
    await nav.getByRole('link', { name: 'Invitations' }).click();
    await page.getByRole('heading', { name: 'Inviter quelqu’un' }).waitFor();
    await page.getByRole('button', { name: 'Envoyer l’invitation' }).waitFor();
    await nav.getByRole('link', { name: 'Paramètres' }).click();
    await page.getByRole('heading', { level: 1, name: 'Paramètres de l’espace de travail' }).waitFor();
    await page.getByRole('button', { name: 'Enregistrer les paramètres' }).waitFor();
    await shoot(page, 'language-fr-admin-settings-desktop');
    await nav.getByRole('link', { name: 'Journal d’audit' }).click();
    await page.getByRole('columnheader', { name: 'Heure' }).waitFor();
    const firstTime = page.locator('table tbody tr').first().locator('td').first();
    await firstTime.waitFor();
    // a French date and 24-hour time, e.g. "24 nov. 2026, 17:10" (not "Nov 24, 2026, 5:10 PM")
    expect(await firstTime.textContent()).toMatch(/^\d{1,2} [a-zéû]+\.? \d{4}(,| à) \d{2}:\d{2}$/);
    await page.setViewportSize(PHONE);
    await shoot(page, 'language-fr-admin-audit-phone');
  });

  it('speaks Spanish to a Mexican browser: sign-in, its error, the account page, axe clean; the switcher offers Español to others', async () => {
    diagnoseOnFailure('27b');
    const owner = `idioma-${run}@acme.test`;
    const tenantSlug = await createWorkspace(`Idioma ${run}`, owner);
    const person = await newPerson(PHONE, 'es-MX');
    await person.goto(`${server.url}/app/${tenantSlug}/sign-in`);
    await person.getByRole('heading', { name: 'Iniciar sesión', exact: true }).waitFor();
    expect(await person.locator('html').getAttribute('lang')).toBe('es');
    await expect.poll(() => person.title()).toBe(`Iniciar sesión · Idioma ${run}`);
    await person.getByLabel('Correo electrónico').fill(owner);
    await person.getByLabel('Contraseña', { exact: true }).fill('not the password at all');
    await person.getByRole('button', { name: 'Iniciar sesión', exact: true }).click();
    await person.getByRole('alert').getByText('El correo o la contraseña no son correctos.').waitFor();
    await person.getByRole('link', { name: '¿Olvidaste tu contraseña?' }).waitFor();
    await shoot(person, 'language-es-sign-in-phone');
    const scan = await new AxeBuilder({ page: person }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(scan.violations.map((v) => `es sign-in: ${v.id}`)).toEqual([]);

    await person.getByLabel('Contraseña', { exact: true }).fill(PASSWORD);
    await person.getByRole('button', { name: 'Iniciar sesión', exact: true }).click();
    await person.getByRole('heading', { name: 'Tu cuenta', exact: true }).waitFor();
    await person.getByRole('heading', { name: 'Cambiar contraseña' }).waitFor();
    const sessionLine = await person.getByRole('list', { name: 'Dispositivos con sesión iniciada' }).locator('.hint').first().textContent();
    // a Spanish date, e.g. "sesión iniciada el 27 nov 2026, 3:40" (not "Nov 27, 2026, 3:40 AM")
    expect(sessionLine).toMatch(/sesión iniciada el \d{1,2} [a-z]+\.? \d{4}, \d{1,2}:\d{2}/);
    await shoot(person, 'language-es-account-phone');
    const accountScan = await new AxeBuilder({ page: person }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(accountScan.violations.map((v) => `es account: ${v.id}`)).toEqual([]);

    // an English browser picks Spanish by its own name in the switcher
    const other = await newPerson(DESKTOP, 'en-US');
    await other.goto(`${server.url}/app/${tenantSlug}/forgot-password`);
    await other.getByLabel('Language').selectOption({ label: 'Español' });
    await other.getByRole('heading', { name: 'Restablece tu contraseña' }).waitFor();
    expect(await other.locator('html').getAttribute('lang')).toBe('es');
  });

  // every kind of page, in groups of a few pages so that each test stays well inside its limit on a busy machine
  const axeGroups: [string, (visitor: Page) => [Page, string, string][]][] = [
    ['the public pages', (visitor) => [
      [visitor, `${server.url}/`, 'home'],
      [visitor, `${server.url}/app/${slug}/sign-in`, 'sign-in'],
      [visitor, `${server.url}/app/${slug}/sign-up`, 'sign-up'],
      [visitor, `${server.url}/app/${slug}/forgot-password`, 'forgot-password'],
      [visitor, `${server.url}/app/no-such-${run}/sign-in`, 'unknown workspace'],
    ]],
    ['the account page and the first console pages', () => [
      [admin, `${server.url}/app/${slug}/account`, 'account'],
      [admin, `${server.url}/app/${slug}/admin`, 'admin activity'],
      [admin, `${server.url}/app/${slug}/admin/users`, 'admin users'],
    ]],
    ['the other console pages', () => [
      [admin, `${server.url}/app/${slug}/admin/invites`, 'admin invites'],
      [admin, `${server.url}/app/${slug}/admin/settings`, 'admin settings'],
      [admin, `${server.url}/app/${slug}/admin/audit`, 'admin audit'],
      [admin, `${server.url}/app/${slug}/admin/webhooks`, 'admin webhooks'],
    ]],
  ];
  it.each(axeGroups)('passes an axe accessibility scan (WCAG 2.1 A and AA) on %s, in the light and the dark theme', async (_group, pagesOf) => {
    diagnoseOnFailure('22');
    const found: string[] = [];
    const pages = pagesOf(await newPerson());
    for (const scheme of ['light', 'dark'] as const) {
      for (const [page, url, name] of pages) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(url);
        await page.locator('h1').first().waitFor();
        await page.waitForLoadState('networkidle');
        const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
        for (const v of result.violations) found.push(`${scheme} ${name}: ${v.id} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`);
      }
    }
    await admin.emulateMedia({ colorScheme: 'light' });
    expect(found).toEqual([]);
  }, 120_000);

  it('shows the API reference at /docs in the dark theme when the system prefers it or the theme switcher chose it', async () => {
    diagnoseOnFailure('docs-dark');
    const page = await newPerson();
    const dark = () => page.evaluate<boolean>('document.documentElement.classList.contains("dark-mode")');
    const background = () => page.evaluate<string>('getComputedStyle(document.querySelector(".swagger-ui")).backgroundColor');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    expect(await dark()).toBe(true);
    expect(await background()).toBe('rgb(28, 32, 34)');
    await shoot(page, 'docs-dark-desktop');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(dark).toBe(false);
    // the choice made on the other pages is kept in this origin's storage and wins over the system
    await page.goto(`${server.url}/`);
    await page.getByLabel('Theme').selectOption('dark');
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    expect(await dark()).toBe(true);
    await page.goto(`${server.url}/`);
    await page.getByLabel('Theme').selectOption('light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    expect(await dark()).toBe(false);
  });

  it('renders the API reference at /docs from the OpenAPI document', async () => {
    diagnoseOnFailure('9');
    const page = await newPerson();
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    await page.getByRole('button', { name: /Authorize/ }).first().waitFor();
    await shoot(page, 'docs-desktop');
    await page.setViewportSize(PHONE);
    await shoot(page, 'docs-phone');
    await shoot(admin, 'admin-audit-desktop-final');
    expect(cspViolations).toEqual([]);
  });
});
