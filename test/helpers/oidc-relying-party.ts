import * as oidc from 'openid-client';
import { expect } from 'vitest';
import type { Api } from './api.js';

/** One user agent's cookies for the service's provider endpoints (a browser without JavaScript). */
export class CookieBrowser {
  private readonly cookies = new Map<string, string>();

  /** GET (or POST) without following redirects; keeps the cookies the answer sets. */
  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const jar = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (jar) headers.set('cookie', jar);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

/** Where a redirect answer points, absolute. */
export function locationOf(res: Response, base: string): URL {
  const location = res.headers.get('location');
  expect(location, `status ${res.status}`).toBeTruthy();
  return new URL(location!, base);
}

/** A registered application and the openid-client configuration of its issuer. */
export interface RelyingParty {
  config: oidc.Configuration;
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  issuer: string;
}

/** Registers an application over the API and discovers its issuer with openid-client. */
export async function registerRelyingParty(
  api: Api,
  tenant: { slug: string; accessToken: string },
  publicUrl: string,
  type: 'web' | 'spa' | 'native' | 'm2m' = 'web',
  extra: { redirectUris?: string[]; postLogoutRedirectUris?: string[] } = {},
): Promise<RelyingParty> {
  const redirectUri = extra.redirectUris?.[0] ?? 'https://app.example.com/callback';
  const created = await api.post(
    `/v1/${tenant.slug}/applications`,
    { name: `App ${type}`, type, redirectUris: extra.redirectUris ?? [redirectUri], postLogoutRedirectUris: extra.postLogoutRedirectUris ?? ['https://app.example.com/signed-out'] },
    { token: tenant.accessToken },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const issuer = `${publicUrl}/v1/${tenant.slug}/oidc`;
  const clientId = created.body.application.clientId as string;
  const clientSecret = created.body.clientSecret as string | undefined;
  const config = await oidc.discovery(new URL(issuer), clientId, clientSecret, clientSecret ? undefined : oidc.None(), { execute: [oidc.allowInsecureRequests] });
  return { config, clientId, clientSecret, redirectUri, issuer };
}

/** What an authorization-code sign-in through the hosted pages gives the relying party. */
export interface SignInResult {
  callback: URL;
  verifier: string;
  state: string;
  nonce: string;
}

/** The hosted session a person holds: its access token, and its refresh token as proof of holding the session. */
export interface HostedSessionTokens {
  accessToken: string;
  refreshToken: string;
}

/**
 * Finishes a provider interaction with a hosted session, as the hosted page does: the access token,
 * and the session's refresh token as the proof that the page's session-binding cookie gives a browser.
 */
export function completeInteraction(
  browser: CookieBrowser, interactionUrl: string, session: HostedSessionTokens, choice: { organizationId?: string } = {},
): Promise<Response> {
  return browser.request(`${interactionUrl}/complete`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ refreshToken: session.refreshToken, ...choice }),
  });
}

/**
 * Plays the browser of an authorization-code + PKCE sign-in: follows the authorization request to
 * the hosted sign-in hand-off, finishes each interaction with `session` (the hosted session the
 * person holds), and stops at the redirect to the application's `redirect_uri`.
 * @param params extra authorization parameters (`prompt`, `max_age`, `scope`, `redirect_uri`); an empty value removes one.
 * @param choice what the person picks on the hosted page (`organizationId`: the organization picker).
 */
export async function signInThroughProvider(
  rp: RelyingParty,
  browser: CookieBrowser,
  session: HostedSessionTokens,
  params: Record<string, string> = {},
  choice: { organizationId?: string } = {},
): Promise<SignInResult> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(rp.config, {
    redirect_uri: rp.redirectUri, scope: 'openid email offline_access', prompt: 'consent', state, nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...params,
  });
  // an empty value leaves the parameter out (e.g. `prompt: ''`: no prompt at all)
  for (const [key, value] of Object.entries(params)) if (value === '') url.searchParams.delete(key);
  let next = url;
  for (let hop = 0; hop < 12; hop++) {
    const res = await browser.request(next.href);
    expect([302, 303], `${next.href} answered ${res.status}: ${await res.clone().text()}`).toContain(res.status);
    const target = locationOf(res, next.href);
    if (target.href.startsWith(params.redirect_uri ?? rp.redirectUri)) return { callback: target, verifier, state, nonce };
    const interaction = /\/oidc\/interaction\/([^/?]+)$/.exec(target.pathname);
    if (interaction) {
      const handOff = await browser.request(target.href);
      expect(handOff.status).toBe(303);
      expect(locationOf(handOff, target.href).pathname).toMatch(/\/app\/[^/]+\/sign-in$/);
      const complete = await completeInteraction(browser, target.href, session, choice);
      const body = (await complete.json()) as { redirectTo?: string };
      expect(complete.status, JSON.stringify(body)).toBe(200);
      next = new URL(body.redirectTo!, target.href);
      continue;
    }
    next = target;
  }
  throw new Error('too many redirects');
}
