import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, signupMember } from '../helpers/api.js';
import { completeInteraction, CookieBrowser, locationOf, registerRelyingParty, signInThroughProvider, type HostedSessionTokens, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * What relying parties find at their defaults (docs/oidc.md "Relying parties at their defaults"):
 * discovery checked field by field against OpenID Connect Discovery 1.0 and RFC 8414, the JWKS
 * against RFC 7517, URLs from PUBLIC_URL whatever the Host, per-tenant provider cookies, claims in
 * the ID token, refresh tokens without prompt=consent, `id_token` + `form_post`, and the provider's
 * own pages (form_post under the CSP, errors and logout as HTML in the person's language).
 */

const suite = useTestServerAtPublicUrl();

/** A GET with headers fetch will not send (Host), through node:http. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The value of a hidden input of a form_post page. */
function hiddenInput(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

/** The inline script of a page and whether the page's CSP allows exactly it (its SHA-256, no 'none'). */
function expectOnlyItsScriptAllowed(res: Response, html: string): void {
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
  expect(script, html).toBeDefined();
  const csp = res.headers.get('content-security-policy')!;
  const scriptSrc = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src'));
  expect(scriptSrc).toBe(`script-src 'sha256-${createHash('sha256').update(script!).digest('base64')}'`);
  expect(csp).toContain("default-src 'none'");
}

describe('discovery and JWKS', () => {
  it('answers what OpenID Connect Discovery 1.0 §3 and RFC 8414 §2 require, RS256 among the ID token algorithms and only working client authentication', async () => {
    const tenant = await createTenant(suite.api);
    const issuer = `${suite.publicUrl}/v1/${tenant.slug}/oidc`;
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const doc = (await res.json()) as Record<string, unknown>;
    // Discovery 1.0 §3 REQUIRED (token_endpoint: not implicit-only), RFC 8414 §2 REQUIRED
    expect(doc.issuer).toBe(issuer);
    for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint', 'end_session_endpoint', 'introspection_endpoint', 'revocation_endpoint']) {
      expect(String(doc[endpoint]).startsWith(`${issuer}/`), endpoint).toBe(true);
    }
    expect(doc.response_types_supported).toEqual(expect.arrayContaining(['code', 'id_token']));
    expect(doc.subject_types_supported).toEqual(['public']);
    expect(doc.id_token_signing_alg_values_supported).toContain('RS256');
    expect(doc.id_token_signing_alg_values_supported).not.toContain('HS256');
    expect(doc.id_token_signing_alg_values_supported).not.toContain('none');
    expect(doc.response_modes_supported).toEqual(expect.arrayContaining(['query', 'form_post']));
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['openid', 'email', 'offline_access']));
    expect(doc.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified']));
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials', 'implicit']));
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    // only the methods that work: no client_secret_jwt / private_key_jwt (no application can use them)
    // (the introspection and revocation endpoints' lists, when present, say the same)
    expect([...(doc.token_endpoint_auth_methods_supported as string[])].sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    for (const field of ['introspection_endpoint_auth_methods_supported', 'revocation_endpoint_auth_methods_supported']) {
      if (doc[field] !== undefined) expect([...(doc[field] as string[])].sort(), field).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    }
    expect(doc.token_endpoint_auth_signing_alg_values_supported).toBeUndefined();
  });

  it('serves the same document at the RFC 8414 path-inserted URL, and 404 for an unknown workspace there', async () => {
    const tenant = await createTenant(suite.api);
    const issuer = `${suite.publicUrl}/v1/${tenant.slug}/oidc`;
    const oidcDoc = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
    const res = await fetch(`${suite.publicUrl}/.well-known/oauth-authorization-server/v1/${tenant.slug}/oidc`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(oidcDoc);
    // what oauth4webapi does with algorithm 'oauth2' (RFC 8414 §3.1), through openid-client
    const config = await oidc.discovery(new URL(issuer), 'any', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests], algorithm: 'oauth2' });
    expect(config.serverMetadata().issuer).toBe(issuer);
    expect((await fetch(`${suite.publicUrl}/.well-known/oauth-authorization-server/v1/no-such-workspace-here/oidc`)).status).toBe(404);
  });

  it('publishes a JWKS as RFC 7517 describes: public RS256 and ES256 keys, unique kids, its media type, Cache-Control', async () => {
    const tenant = await createTenant(suite.api);
    const res = await fetch(`${suite.publicUrl}/v1/${tenant.slug}/oidc/jwks`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    const rsa = keys.find((k) => k.alg === 'RS256');
    expect(rsa).toMatchObject({ kty: 'RSA', use: 'sig', e: 'AQAB' });
    expect(Buffer.from(rsa!.n as string, 'base64url').length * 8).toBeGreaterThanOrEqual(2048);
    expect(keys.find((k) => k.alg === 'ES256')).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig' });
    for (const key of keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key[secret]).toBeUndefined();
  });

  it('builds every URL from PUBLIC_URL, whatever Host or X-Forwarded-* the request carries', async () => {
    const tenant = await createTenant(suite.api);
    const issuer = `${suite.publicUrl}/v1/${tenant.slug}/oidc`;
    const res = await rawGet(`${issuer}/.well-known/openid-configuration`, { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.body) as Record<string, string>;
    for (const [name, value] of Object.entries(doc)) {
      if (typeof value === 'string' && /^https?:/.test(value)) expect(value.startsWith(`${issuer}`), `${name}: ${value}`).toBe(true);
    }
    expect(res.body).not.toContain('evil.example');
  });
});

describe('tokens at the relying parties\' defaults', () => {
  it('puts the claims of the scopes asked into the RS256 ID token, and gives a refresh token for offline_access without prompt=consent, by single sign-on too', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const first = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const second = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'spa', { redirectUris: ['http://localhost:5173/callback'] });
    const browser = new CookieBrowser();
    for (const rp of [first, second]) {
      const result = await signInThroughProvider(rp, browser, member, { prompt: '', scope: 'openid email offline_access' });
      const tokens = await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('RS256');
      const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${rp.issuer}/jwks`)), { issuer: rp.issuer, audience: rp.clientId });
      expect(payload).toMatchObject({ sub: member.id, email: member.email, email_verified: false });
      expect(tokens.refresh_token, rp.clientId).toBeTruthy();
      expect(tokens.scope?.split(' ')).toContain('offline_access');
    }
  });

  it('gives no refresh token when offline_access was not asked for, and no email claim without the email scope', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const result = await signInThroughProvider(rp, new CookieBrowser(), member, { prompt: '', scope: 'openid' });
    const tokens = await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.claims()!.email).toBeUndefined();
  });
});

describe('response_mode=form_post and response_type=id_token', () => {
  async function signedInBrowser(rp: RelyingParty, session: HostedSessionTokens): Promise<CookieBrowser> {
    const browser = new CookieBrowser();
    await signInThroughProvider(rp, browser, session, { prompt: '' });
    return browser;
  }

  it('answers a code by form_post with a page whose CSP allows exactly its own auto-submit script', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const browser = await signedInBrowser(rp, member);
    const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: rp.redirectUri, scope: 'openid email', response_mode: 'form_post', state: 'st', nonce: 'n-1' });
    const res = await browser.request(url.href);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`action="${rp.redirectUri}"`);
    expect(hiddenInput(html, 'code')).toBeTruthy();
    expectOnlyItsScriptAllowed(res, html);
  });

  it('gives a web application an RS256 ID token (claims included, nonce required, no access token) for response_type=id_token with form_post only', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const browser = await signedInBrowser(rp, member);
    const base = { client_id: rp.clientId, redirect_uri: rp.redirectUri, scope: 'openid email', response_type: 'id_token', state: 'st-1' };
    const authorize = (params: Record<string, string>) => browser.request(`${rp.issuer}/auth?${new URLSearchParams({ ...base, ...params })}`);

    const res = await authorize({ response_mode: 'form_post', nonce: 'nonce-1' });
    expect(res.status).toBe(200);
    const html = await res.text();
    expectOnlyItsScriptAllowed(res, html);
    expect(hiddenInput(html, 'access_token')).toBeUndefined();
    expect(hiddenInput(html, 'code')).toBeUndefined();
    expect(hiddenInput(html, 'state')).toBe('st-1');
    const idToken = hiddenInput(html, 'id_token')!;
    const { payload, protectedHeader } = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${rp.issuer}/jwks`)), { issuer: rp.issuer, audience: rp.clientId });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: member.id, nonce: 'nonce-1', email: member.email });

    const noNonce = await authorize({ response_mode: 'form_post' });
    expect(hiddenInput(await noNonce.text(), 'error')).toBe('invalid_request');
    const fragment = await authorize({ nonce: 'nonce-2' });
    const target = locationOf(fragment, rp.issuer);
    expect(new URLSearchParams(target.hash.slice(1)).get('error')).toBe('invalid_request');
    expect(target.hash).not.toContain('id_token=');

    const spa = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'spa', { redirectUris: ['http://localhost:5173/callback'] });
    const spaAnswer = await browser.request(`${rp.issuer}/auth?${new URLSearchParams({ ...base, client_id: spa.clientId, redirect_uri: spa.redirectUri, response_mode: 'form_post', nonce: 'n' })}`);
    expect(hiddenInput(await spaAnswer.text(), 'id_token')).toBeUndefined();
  });
});

describe('the provider\'s own pages', () => {
  it('shows an error it cannot send back as an HTML page in the workspace\'s name and the person\'s language, not raw JSON', async () => {
    const tenant = await createTenant(suite.api, 'Acme Pages');
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const unknownClient = `${rp.issuer}/auth?client_id=nobody&response_type=code&scope=openid&redirect_uri=https://evil.example.com/cb`;
    const german = await fetch(unknownClient, { headers: { 'accept-language': 'de-CH, en;q=0.5' } });
    expect(german.status).toBe(400);
    expect(german.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await german.text();
    expect(html).toContain('<html lang="de">');
    expect(html).toContain('Acme Pages');
    expect(html).toContain('Diese Anfrage kann nicht abgeschlossen werden');
    expect(html).toContain('invalid_client');
    expect(html).not.toContain('<script');

    const badRedirect = `${rp.issuer}/auth?client_id=${rp.clientId}&response_type=code&scope=openid&redirect_uri=https://evil.example.com/cb&ui_locales=fr-CA%20de`;
    const french = await fetch(badRedirect, { headers: { 'accept-language': 'de' } });
    expect(french.status).toBe(400);
    const page = await french.text();
    expect(page).toContain('<html lang="fr">');
    expect(page).toContain('redirect_uri');

    const spanish = await fetch(badRedirect.replace('ui_locales=fr-CA%20de', 'ui_locales=es-419'), { headers: { 'accept-language': 'de' } });
    expect(spanish.status).toBe(400);
    const spanishPage = await spanish.text();
    expect(spanishPage).toContain('<html lang="es">');
    expect(spanishPage).toContain('Esta solicitud no se puede completar');
  });

  it('tells the hosted sign-in page the language of ui_locales the pages speak', async () => {
    const tenant = await createTenant(suite.api);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    for (const [uiLocales, expected] of [['it fr-CA de', 'fr'], ['it es-MX', 'es'], ['it', null], [undefined, null]] as const) {
      const browser = new CookieBrowser();
      const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: rp.redirectUri, scope: 'openid', state: 's', nonce: 'n', ...(uiLocales ? { ui_locales: uiLocales } : {}) });
      const handOff = locationOf(await browser.request(url.href), url.href);
      expect(handOff.pathname).toMatch(/\/interaction\/[^/]+$/);
      const details = await browser.request(`${handOff.href}/details`);
      expect(details.status).toBe(200);
      expect(((await details.json()) as { uiLocale: unknown }).uiLocale, String(uiLocales)).toBe(expected);
    }
  });

  it('asks to confirm a logout in the language of ui_locales, and finishes a logout without a provider session instead of a blank page', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const browser = new CookieBrowser();
    const result = await signInThroughProvider(rp, browser, member, { prompt: '' });
    const tokens = await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
    const end = oidc.buildEndSessionUrl(rp.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://app.example.com/signed-out', ui_locales: 'de' });
    const confirm = await browser.request(end.href);
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain('<html lang="de">');
    expect(html).toContain('abmelden?');
    expect(html).toContain('id="op.logoutForm"');
    expect(confirm.headers.get('content-security-policy')).toContain("script-src 'none'");

    // another browser, no provider session: oidc-provider auto-posts the logout form; its script may run
    const elsewhere = await new CookieBrowser().request(end.href);
    expect(elsewhere.status).toBe(200);
    expectOnlyItsScriptAllowed(elsewhere, await elsewhere.text());

    // a post-logout URI with an empty path matches with and without its trailing slash (RFC 3986 §6.2.3), nothing else does
    const patched = await suite.api.patch(`/v1/${tenant.slug}/applications/${(await suite.api.get(`/v1/${tenant.slug}/applications`, { token: tenant.accessToken })).body.items[0].id}`, { postLogoutRedirectUris: ['https://app.example.com'] }, { token: tenant.accessToken });
    expect(patched.status).toBe(200);
    for (const [uri, status] of [['https://app.example.com/', 200], ['https://app.example.com', 200], ['https://app.example.com/x', 400]] as const) {
      const res = await browser.request(oidc.buildEndSessionUrl(rp.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: uri }).href);
      expect(res.status, uri).toBe(status);
    }
  });

  it('scopes the provider session cookie to the workspace\'s issuer path, SameSite=Lax over http', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const cookies: string[] = [];
    const browser = new CookieBrowser();
    const original = browser.request.bind(browser);
    browser.request = async (url, init) => {
      const res = await original(url, init);
      cookies.push(...res.headers.getSetCookie());
      return res;
    };
    await signInThroughProvider(rp, browser, member, { prompt: '' });
    const session = cookies.filter((c) => c.startsWith('_session='));
    expect(session.length).toBeGreaterThan(0);
    for (const cookie of session) {
      expect(cookie).toContain(`path=/v1/${tenant.slug}/oidc;`);
      expect(cookie).toMatch(/samesite=lax/i);
      expect(cookie).not.toMatch(/;\s*secure/i);
    }
  });
});

describe('behind https (PUBLIC_URL https, TLS at a proxy)', () => {
  let https: TestServer;
  const httpsPublicUrl = 'https://id.example.test';
  beforeAll(async () => {
    https = await startTestServer({ PUBLIC_URL: httpsPublicUrl });
  });
  afterAll(async () => {
    await https?.close();
  });

  it('advertises https endpoints though the request came over http, and sets the session cookie SameSite=None; Secure on the issuer path', async () => {
    const httpsApi = new Api(https.url);
    const tenant = await createTenant(httpsApi);
    const member = await signupMember(httpsApi, tenant.slug);
    const issuer = `${httpsPublicUrl}/v1/${tenant.slug}/oidc`;
    const doc = JSON.parse((await rawGet(`${https.url}/v1/${tenant.slug}/oidc/.well-known/openid-configuration`, { host: 'id.example.test' })).body) as Record<string, string>;
    expect(doc.issuer).toBe(issuer);
    expect(doc.authorization_endpoint).toBe(`${issuer}/auth`);
    expect(doc.token_endpoint).toBe(`${issuer}/token`);

    const created = await httpsApi.post(`/v1/${tenant.slug}/applications`, { name: 'App', type: 'web', redirectUris: ['https://app.example.com/callback'] }, { token: tenant.accessToken });
    const clientId = created.body.application.clientId as string;
    // the authorization request, played against the local address of the https deployment
    const local = (url: string) => url.replace(httpsPublicUrl, https.url);
    const browser = new CookieBrowser();
    const cookies: string[] = [];
    let next = `${issuer}/auth?${new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid', redirect_uri: 'https://app.example.com/callback', state: 's', nonce: 'n', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`;
    for (let hop = 0; hop < 8 && !next.startsWith('https://app.example.com/'); hop++) {
      const interaction = /\/oidc\/interaction\/[^/?]+$/.test(new URL(next).pathname);
      const res = interaction
        ? await completeInteraction(browser, local(next), member)
        : await browser.request(local(next));
      cookies.push(...res.headers.getSetCookie());
      next = interaction ? new URL(((await res.json()) as { redirectTo: string }).redirectTo, next).href : locationOf(res, next).href;
    }
    expect(new URL(next).searchParams.get('code')).toBeTruthy();
    const session = cookies.filter((c) => c.startsWith('_session='));
    expect(session.length).toBeGreaterThan(0);
    for (const cookie of session) {
      expect(cookie).toContain(`path=/v1/${tenant.slug}/oidc;`);
      expect(cookie).toMatch(/samesite=none/i);
      expect(cookie).toMatch(/;\s*secure/i);
    }
  });
});
