import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { PROVIDER_CSP } from '../../src/rest/oidc-routes.js';
import { restRouteLabel } from '../../src/rest/route-labels.js';
import { createTenant, expectError, signupMember, type TestTenant } from '../helpers/api.js';
import { completeInteraction, CookieBrowser, locationOf, registerRelyingParty, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * The hand-off between a workspace's OpenID Provider and its hosted sign-in page (docs/oidc.md
 * "Sign-in") as procedures at the provider's paths (src/routers/oidc-interaction.ts):
 * `GET {issuer}/interaction/{uid}/details` and `POST {issuer}/interaction/{uid}/complete` keep the
 * provider's CSP and no-store, answer an unknown workspace 404 in the envelope, refuse an API key
 * with 401 `user_token_required` and an access token alone with 401 `session_proof_required`, and
 * cannot finish a sign-in through /trpc (the interaction cookie never reaches it).
 */

const suite = useTestServerAtPublicUrl();

interface Pending {
  tenant: TestTenant;
  rp: RelyingParty;
  browser: CookieBrowser;
  /** `{issuer}/interaction/{uid}`, absolute. */
  interaction: string;
}

/** A workspace with a web application and a browser whose authorization request waits at the hand-off. */
async function pendingSignIn(params: Record<string, string> = {}): Promise<Pending> {
  const tenant = await createTenant(suite.api);
  const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
  const browser = new CookieBrowser();
  const url = oidc.buildAuthorizationUrl(rp.config, {
    redirect_uri: rp.redirectUri, scope: 'openid', state: 's', nonce: 'n',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', ...params,
  });
  const interaction = locationOf(await browser.request(url.href), url.href);
  expect(interaction.pathname).toMatch(/^\/v1\/[^/]+\/oidc\/interaction\/[^/]+$/);
  return { tenant, rp, browser, interaction: interaction.href };
}

/** The envelope of an answer, with its `details.reason`. */
async function envelopeOf(res: Response): Promise<{ code: string; message: string; details: { reason: string } & Record<string, unknown> }> {
  return (await res.json()) as { code: string; message: string; details: { reason: string } & Record<string, unknown> };
}

function expectProviderHeaders(res: Response): void {
  expect(res.headers.get('content-security-policy')).toBe(PROVIDER_CSP);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
}

describe('GET {issuer}/interaction/{uid}/details', () => {
  it('answers the pending sign-in with the provider\'s CSP and no-store', async () => {
    const { browser, interaction } = await pendingSignIn({ ui_locales: 'de fr', prompt: 'login' });
    const res = await browser.request(`${interaction}/details`);
    expect(res.status, await res.clone().text()).toBe(200);
    expectProviderHeaders(res);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      clientName: 'App web', freshSignInRequired: true, notBefore: expect.any(Number), uiLocale: 'de', organizationsRequested: false, organizationId: null,
    });
    expect(body.notBefore).toBeGreaterThan(0);
  });

  it('refuses another browser (no interaction cookie) with 401 interaction_not_found, still with the provider\'s headers', async () => {
    const { interaction } = await pendingSignIn();
    const res = await fetch(`${interaction}/details`);
    expect(res.status).toBe(401);
    expectProviderHeaders(res);
    expect((await envelopeOf(res)).details.reason).toBe('interaction_not_found');
  });

  it('answers an unknown workspace 404 tenant_not_found in the envelope', async () => {
    const res = await suite.api.get('/v1/no-such-workspace-here/oidc/interaction/abc/details');
    expectError(res, 404, 'NOT_FOUND', 'tenant_not_found');
    expect(res.headers.get('content-security-policy')).toBe(PROVIDER_CSP);
  });
});

describe('POST {issuer}/interaction/{uid}/complete', () => {
  it('finishes the sign-in with the session and its refresh token: {redirectTo}, the provider\'s CSP and no-store', async () => {
    const { tenant, rp, browser, interaction } = await pendingSignIn();
    const member = await signupMember(suite.api, tenant.slug);
    const res = await completeInteraction(browser, interaction, member);
    expect(res.status, await res.clone().text()).toBe(200);
    expectProviderHeaders(res);
    const { redirectTo } = (await res.json()) as { redirectTo: string };
    expect(redirectTo).toMatch(new RegExp(`^${rp.issuer}/auth/`));
  });

  it('refuses an API key with 401 user_token_required: finishing a sign-in needs the person\'s session', async () => {
    const { tenant, browser, interaction } = await pendingSignIn();
    const key = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'live', environment: 'live' }, { token: tenant.accessToken });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    const res = await completeInteraction(browser, interaction, { accessToken: key.body.plaintext as string, refreshToken: tenant.refreshToken });
    expect(res.status).toBe(401);
    expectProviderHeaders(res);
    expect(await envelopeOf(res)).toEqual({
      code: 'UNAUTHORIZED', message: 'Finishing a sign-in needs the person\'s session, not an API key', details: { reason: 'user_token_required' },
    });
  });

  it('refuses an access token without session proof with 401 session_proof_required, and no credential with missing_credential', async () => {
    const { tenant, browser, interaction } = await pendingSignIn();
    const member = await signupMember(suite.api, tenant.slug);
    const bare = await browser.request(`${interaction}/complete`, {
      method: 'POST', headers: { authorization: `Bearer ${member.accessToken}`, 'content-type': 'application/json' }, body: '{}',
    });
    expect(bare.status).toBe(401);
    expect((await envelopeOf(bare)).details.reason).toBe('session_proof_required');
    const anonymous = await browser.request(`${interaction}/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    expect((await envelopeOf(anonymous)).details.reason).toBe('missing_credential');
    // the interaction is still pending: the same browser finishes it with the proof
    expect((await completeInteraction(browser, interaction, member)).status).toBe(200);
  });

  it('answers an unknown workspace 404 tenant_not_found in the envelope, before any credential check', async () => {
    const res = await suite.api.post('/v1/no-such-workspace-here/oidc/interaction/abc/complete', { refreshToken: 'x' }, { token: 'not-a-token' });
    expectError(res, 404, 'NOT_FOUND', 'tenant_not_found');
    expect(res.headers.get('content-security-policy')).toBe(PROVIDER_CSP);
  });

  it('refuses a malformed organization id (400 validation_failed) and a body over 4 KiB (413 body_too_large)', async () => {
    const { tenant, browser, interaction } = await pendingSignIn();
    const member = await signupMember(suite.api, tenant.slug);
    const malformed = await completeInteraction(browser, interaction, member, { organizationId: 'acme' });
    expect(malformed.status).toBe(400);
    expect(await envelopeOf(malformed)).toMatchObject({ details: { reason: 'validation_failed', issues: [{ path: 'organizationId', message: 'Must be an organization id' }] } });
    const large = await browser.request(`${interaction}/complete`, {
      method: 'POST', headers: { authorization: `Bearer ${member.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: member.refreshToken, padding: 'x'.repeat(4200) }),
    });
    expect(large.status).toBe(413);
    expect(await envelopeOf(large)).toMatchObject({ details: { reason: 'body_too_large', limitBytes: 4096 } });
  });
});

describe('the hand-off outside its REST paths', () => {
  it('cannot be finished through /trpc, which the interaction cookie (scoped to the provider\'s path) never reaches: 401 interaction_not_found', async () => {
    const { tenant, browser, interaction } = await pendingSignIn();
    const uid = new URL(interaction).pathname.split('/').at(-1)!;
    const member = await signupMember(suite.api, tenant.slug);
    const input = encodeURIComponent(JSON.stringify({ tenantSlug: tenant.slug, uid }));
    const reasonOf = async (res: Response) => ((await res.json()) as { error: { data: { details: { reason: string } } } }).error.data.details.reason;
    // a browser sends the path-scoped cookie to the provider's path only (CookieBrowser ignores paths: plain fetch here)
    const details = await fetch(`${suite.server.url}/trpc/oidcInteraction.details?input=${input}`);
    expect(details.status).toBe(401);
    expect(await reasonOf(details)).toBe('interaction_not_found');
    const complete = await fetch(`${suite.server.url}/trpc/oidcInteraction.complete`, {
      method: 'POST', headers: { authorization: `Bearer ${member.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenantSlug: tenant.slug, uid, refreshToken: member.refreshToken }),
    });
    expect(complete.status).toBe(401);
    expect(await reasonOf(complete)).toBe('interaction_not_found');
    // the interaction is untouched: the REST path still finishes it
    expect((await completeInteraction(browser, interaction, member)).status).toBe(200);
  });

  it('leaves the provider\'s own interaction route alone: GET {issuer}/interaction/{uid} sends the browser to the hosted page', async () => {
    const { tenant, browser, interaction } = await pendingSignIn();
    const res = await browser.request(interaction);
    expect(res.status).toBe(303);
    expect(res.headers.get('content-security-policy')).toBe(PROVIDER_CSP);
    const page = locationOf(res, interaction);
    expect(page.pathname).toBe(`/app/${tenant.slug}/sign-in`);
    expect(page.searchParams.get('interaction')).toBe(new URL(interaction).pathname.split('/').at(-1));
  });

  it('is counted in the request metrics under its procedures, also when refused before they ran; the provider\'s own route as oidc.interaction', () => {
    expect(restRouteLabel('GET', '/v1/acme/oidc/interaction/abc/details')).toBe('oidcInteraction.details');
    expect(restRouteLabel('POST', '/v1/acme/oidc/interaction/abc/complete/')).toBe('oidcInteraction.complete');
    expect(restRouteLabel('GET', '/v1/acme/oidc/interaction/abc')).toBe('oidc.interaction');
    expect(restRouteLabel('GET', '/v1/acme/oidc/interaction/abc/complete')).toBe('oidc.interaction');
  });

  it('is described in the OpenAPI document: details public, complete with a bearer credential', async () => {
    const doc = (await suite.api.get('/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { security?: unknown[]; tags?: string[]; responses: Record<string, unknown> }>>;
    };
    const details = doc.paths['/v1/{tenantSlug}/oidc/interaction/{uid}/details']?.get;
    const complete = doc.paths['/v1/{tenantSlug}/oidc/interaction/{uid}/complete']?.post;
    expect(details?.security).toEqual([]);
    expect(complete?.security).toEqual([{ Authorization: [] }]);
    expect(Object.keys(details!.responses)).toEqual(expect.arrayContaining(['200', '401', '404', '429']));
    expect(Object.keys(complete!.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '409', '413', '429']));
  });
});
