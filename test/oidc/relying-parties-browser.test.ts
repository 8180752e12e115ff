import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
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
 *   `post_logout_redirect_uri` sent without the trailing slash it was registered with.
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
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${firstBase}/`);
    expect(await userOn(page)).toBeNull();

    // sign out of the second: the provider session is gone; its auto-submitted form finishes the logout
    await page.goto(`${secondRp.baseURL}/logout`);
    await page.waitForURL(`${secondRp.baseURL}/`);
    expect(await userOn(page)).toBeNull();
    expect(problems).toEqual([]);
  });
});
