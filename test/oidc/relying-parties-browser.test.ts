import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import express from 'express';
import { auth, type ConfigParams } from 'express-openid-connect';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, createTenant, PASSWORD, signupMember } from '../helpers/api.js';
import { freePort } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Relying-party libraries nobody on this project wrote, each at its defaults (issuer, client id and
 * secret, base URL; nothing else), signing a person in through the workspace's hosted sign-in page
 * in Debian's Chromium (docs/oidc.md "Relying parties at their defaults"):
 * - express-openid-connect with its defaults (`response_type=id_token`, `response_mode=form_post`,
 *   RS256), then with `response_type: 'code'` by single sign-on;
 * - signing out of both through RP-initiated logout, the second after the provider session is gone
 *   (oidc-provider's auto-submitted logout form, under the provider's CSP), with a
 *   `post_logout_redirect_uri` sent without the trailing slash it was registered with;
 * - Auth.js (@auth/express) with the provider block docs/oidc.md shows: `session.user.email` is set;
 * - oidc-client-ts in a single-page app on another site (`localhost` against the provider's
 *   `127.0.0.1`): sign-in by redirect with `offline_access` and no `prompt=consent`, then
 *   `signinSilent`, which renews with the refresh token.
 */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`relying-parties-browser: skipped, ${CHROMIUM} is missing`);

/** An express-openid-connect application on its own port. */
interface ExpressRp {
  baseURL: string;
  close(): Promise<void>;
}

/** Starts an express-openid-connect application at `baseURL` (http on a loopback name, listening on 127.0.0.1) with `config` and its defaults. */
async function startExpressOpenIdConnect(baseURL: string, config: ConfigParams): Promise<ExpressRp> {
  const port = Number(new URL(baseURL).port);
  const app = express();
  app.use(auth({ baseURL, secret: 'a-test-cookie-secret-of-the-relying-party-0123456789', authRequired: false, ...config }));
  app.get('/', (req, res) => {
    const user = JSON.stringify(req.oidc.user ?? null).replace(/</g, '\\u003c');
    res.type('html').send(`<!doctype html><html lang="en"><title>Relying party</title><h1>Relying party</h1><pre id="user">${user}</pre></html>`);
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
  });
  expect((server.address() as AddressInfo).port).toBe(port);
  return { baseURL, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The part of @auth/express this file uses. */
interface AuthJsExpress {
  ExpressAuth(config: Record<string, unknown>): express.RequestHandler;
  getSession(req: express.Request, config: Record<string, unknown>): Promise<{ user?: Record<string, unknown> } | null>;
}

/**
 * @auth/express, loaded by a specifier TypeScript does not follow: its types pull in preact's JSX
 * types, which reference the DOM library and would change `Headers` for every file of the program.
 */
async function loadAuthJs(): Promise<AuthJsExpress> {
  const specifier = '@auth/express';
  return (await import(specifier)) as AuthJsExpress;
}

/** An Express app with Auth.js (@auth/express) at `origin`, the provider block of docs/oidc.md "Auth.js (NextAuth) provider". */
async function startAuthJs(origin: string, issuer: string, clientId: string, clientSecret: string): Promise<ExpressRp> {
  const port = Number(new URL(origin).port);
  const { ExpressAuth, getSession } = await loadAuthJs();
  const config = {
    secret: 'a-test-secret-of-the-auth-js-app-0123456789',
    trustHost: true,
    providers: [
      {
        id: 'tenant-identity',
        name: 'Acme',
        type: 'oidc',
        issuer,
        clientId,
        clientSecret,
        checks: ['pkce', 'state', 'nonce'],
        authorization: { params: { scope: 'openid email' } },
      },
    ],
  };
  const app = express();
  app.set('trust proxy', true);
  app.use('/auth', ExpressAuth(config));
  app.get('/', async (req, res) => {
    const session = await getSession(req, config);
    const user = JSON.stringify(session?.user ?? null).replace(/</g, '\\u003c');
    res.type('html').send(`<!doctype html><html lang="en"><title>Auth.js app</title><h1>Auth.js app</h1><pre id="user">${user}</pre></html>`);
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
  });
  return { baseURL: origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A single-page app on `origin` using oidc-client-ts's browser build (global `oidc`) at its defaults. */
async function startOidcClientTsSpa(origin: string, authority: string, clientId: string): Promise<ExpressRp> {
  const port = Number(new URL(origin).port);
  const app = express();
  app.get('/oidc-client-ts.min.js', (_req, res) => res.sendFile(path.resolve('node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js')));
  const settings = JSON.stringify({ authority, client_id: clientId, redirect_uri: `${origin}/callback`, scope: 'openid email offline_access' });
  const page = (body: string) => `<!doctype html><html lang="en"><title>SPA</title><script src="/oidc-client-ts.min.js"></script>
<script>window.mgr = new oidc.UserManager(${settings});</script><h1>SPA</h1>${body}</html>`;
  app.get('/', (_req, res) => res.type('html').send(page('<button id="login" onclick="mgr.signinRedirect()">Sign in</button>')));
  app.get('/callback', (_req, res) => res.type('html').send(page(`<pre id="user"></pre><script>
mgr.signinRedirectCallback().then((u) => { document.getElementById('user').textContent = JSON.stringify({ email: u.profile.email, refresh: Boolean(u.refresh_token) }); },
  (e) => { document.getElementById('user').textContent = JSON.stringify({ error: String(e) }); });
</script>`)));
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
  });
  return { baseURL: origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe.skipIf(!hasChromium)('relying parties at their defaults, in a browser', () => {
  let server: TestServer;
  let api: Api;
  let browser: Browser;
  const rps: ExpressRp[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    await build({ configFile: path.resolve('web/vite.config.ts'), logLevel: 'warn' });
    const port = await freePort();
    server = await startTestServer({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    api = new Api(server.url);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    for (const rp of rps) await rp.close();
    await server?.close();
  });

  async function newPage(): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(`${page.url()}: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
    onTestFailed(async () => {
      console.error(`page at ${page.url()}:\n${(await page.content().catch(() => '')).slice(0, 2000)}\nproblems:\n${problems.join('\n')}`);
    });
    return page;
  }

  async function webApplication(slug: string, accessToken: string, baseURL: string, postLogout: string): Promise<{ clientID: string; clientSecret: string }> {
    const res = await api.post(`/v1/${slug}/applications`, { name: `RP ${baseURL}`, type: 'web', redirectUris: [`${baseURL}/callback`], postLogoutRedirectUris: [postLogout] }, { token: accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { clientID: res.body.application.clientId as string, clientSecret: res.body.clientSecret as string };
  }

  async function userOn(page: Page): Promise<Record<string, unknown> | null> {
    await page.locator('#user').waitFor();
    return JSON.parse((await page.locator('#user').textContent())!) as Record<string, unknown> | null;
  }

  it('express-openid-connect: defaults (id_token + form_post) sign in with the email in req.oidc.user; code by single sign-on; both sign out, the second without a provider session', async () => {
    const tenant = await createTenant(api, 'Interop Works');
    const member = await signupMember(api, tenant.slug);
    const issuerBaseURL = `${server.url}/v1/${tenant.slug}/oidc`;

    // the first application: express-openid-connect's defaults; registered with the trailing slash its post-logout URI is sent without
    const firstBase = `http://127.0.0.1:${await freePort()}`;
    const first = await webApplication(tenant.slug, tenant.accessToken, firstBase, `${firstBase}/`);
    rps.push(await startExpressOpenIdConnect(firstBase, { issuerBaseURL, ...first, idpLogout: true }));

    const page = await newPage();
    await page.goto(`${firstBase}/login`);
    await page.getByText('Sign in to continue to').waitFor();
    await page.getByLabel('Email').fill(member.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // the provider's form_post page submits itself (its script allowed by hash) back to the application
    await page.waitForURL(`${firstBase}/`);
    expect(await userOn(page)).toMatchObject({ sub: member.id, email: member.email, email_verified: false });

    // the second application: response_type code, everything else at the defaults; single sign-on asks nothing
    // on another host name: the two applications' session cookies (both `appSession`) must not meet
    const secondBase = `http://localhost:${await freePort()}`;
    const second = await webApplication(tenant.slug, tenant.accessToken, secondBase, secondBase);
    const secondRp = await startExpressOpenIdConnect(secondBase, { issuerBaseURL, ...second, authorizationParams: { response_type: 'code' }, idpLogout: true });
    rps.push(secondRp);
    await page.goto(`${secondRp.baseURL}/login`);
    await page.waitForURL(`${secondRp.baseURL}/`);
    expect(await userOn(page)).toMatchObject({ sub: member.id, email: member.email });

    // sign out of the first: the provider asks once, then returns to the base URL (sent without its registered slash)
    await page.goto(`${firstBase}/logout`);
    await page.getByRole('heading', { name: 'Sign out of Interop Works?' }).waitFor();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const scan = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
      expect(scan.violations.map((v) => `${scheme} logout page: ${v.id}`)).toEqual([]);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${firstBase}/`);
    expect(await userOn(page)).toBeNull();

    // sign out of the second: the provider session is gone; its auto-submitted form finishes the logout
    await page.goto(`${secondRp.baseURL}/logout`);
    await page.waitForURL(`${secondRp.baseURL}/`);
    expect(await userOn(page)).toBeNull();
    expect(problems).toEqual([]);
  });

  it('Auth.js with the provider block of docs/oidc.md: session.user.email is set from the ID token', async () => {
    const tenant = await createTenant(api, 'Acme');
    const member = await signupMember(api, tenant.slug);
    const origin = `http://127.0.0.1:${await freePort()}`;
    const created = await api.post(`/v1/${tenant.slug}/applications`, { name: 'Auth.js app', type: 'web', redirectUris: [`${origin}/auth/callback/tenant-identity`] }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    rps.push(await startAuthJs(origin, `${server.url}/v1/${tenant.slug}/oidc`, created.body.application.clientId as string, created.body.clientSecret as string));

    const page = await newPage();
    await page.goto(`${origin}/auth/signin`);
    await page.getByRole('button', { name: 'Sign in with Acme' }).click();
    await page.getByText('Sign in to continue to').waitFor();
    await page.getByLabel('Email').fill(member.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${origin}/`);
    expect(await userOn(page)).toMatchObject({ email: member.email });
  });

  it('the hosted sign-in page speaks the language of the application\'s ui_locales to an English browser', async () => {
    const tenant = await createTenant(api);
    const created = await api.post(`/v1/${tenant.slug}/applications`, { name: 'German app', type: 'spa', redirectUris: ['http://localhost:5173/callback'] }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const params = new URLSearchParams({
      client_id: created.body.application.clientId as string, response_type: 'code', scope: 'openid', redirect_uri: 'http://localhost:5173/callback', state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', ui_locales: 'de-DE en',
    });
    const page = await newPage();
    await page.goto(`${server.url}/v1/${tenant.slug}/oidc/auth?${params}`);
    await page.getByText('Melden Sie sich an, um mit').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
  });

  it('oidc-client-ts: a single-page app on another site signs in with offline_access and renews silently with the refresh token, no prompt=consent', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const authority = `${server.url}/v1/${tenant.slug}/oidc`;
    const origin = `http://localhost:${await freePort()}`;
    const created = await api.post(`/v1/${tenant.slug}/applications`, { name: 'SPA', type: 'spa', redirectUris: [`${origin}/callback`] }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    rps.push(await startOidcClientTsSpa(origin, authority, created.body.application.clientId as string));

    const page = await newPage();
    await page.goto(`${origin}/`);
    await page.locator('#login').click();
    await page.getByText('Sign in to continue to').waitFor();
    await page.getByLabel('Email').fill(member.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${origin}/callback**`);
    expect(await userOn(page)).toEqual({ email: member.email, refresh: true });

    const renewed = (await page.evaluate(`(async () => {
      const before = await mgr.getUser();
      const after = await mgr.signinSilent();
      return { changed: before.access_token !== after.access_token, refresh: Boolean(after.refresh_token), email: after.profile.email };
    })()`)) as { changed: boolean; refresh: boolean; email: string };
    expect(renewed).toEqual({ changed: true, refresh: true, email: member.email });
    expect(problems).toEqual([]);
  });
});
