import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createTenant, signupMember, type TestTenant } from '../helpers/api.js';
import {
  completeInteraction, CookieBrowser, locationOf, registerRelyingParty, signInThroughProvider, type HostedSessionTokens, type RelyingParty,
} from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * The organization picker (docs/oidc.md "Organization picker"): an application that asks for scope
 * `organizations` continues with one organization of the person, picked on the hosted page (or named
 * by the application, or the only one), which the ID token and userinfo carry as `organization_id`.
 */

const suite = useTestServerAtPublicUrl();

async function post(tenant: TestTenant, path: string, body: Record<string, unknown>) {
  const res = await suite.api.post(`/v1/${tenant.slug}/${path}`, body, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** A workspace with organizations Acme and Globex, a role `owner`, and a web application. */
async function workspace() {
  const tenant = await createTenant(suite.api);
  await post(tenant, 'organization-roles', { name: 'owner', permissions: ['manage:members'] });
  const acme = (await post(tenant, 'organizations', { name: 'Acme' })).organization.id as string;
  const globex = (await post(tenant, 'organizations', { name: 'Globex' })).organization.id as string;
  const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
  return { tenant, acme, globex, rp };
}

type Workspace = Awaited<ReturnType<typeof workspace>>;

async function member(w: Workspace, organizationIds: string[]) {
  const person = await signupMember(suite.api, w.tenant.slug);
  for (const organizationId of organizationIds) await post(w.tenant, `organizations/${organizationId}/members`, { userId: person.id, roles: ['owner'] });
  return person;
}

/** Signs in through the provider with `choice` and exchanges the code; the ID token is verified by openid-client. */
async function signIn(rp: RelyingParty, session: HostedSessionTokens, params: Record<string, string>, choice: { organizationId?: string } = {}) {
  const result = await signInThroughProvider(rp, new CookieBrowser(), session, { scope: 'openid offline_access organizations', ...params }, choice);
  return oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
}

/** Follows an authorization request to its interaction and tries to finish it with `choice`; @returns the completion's answer. */
async function tryToFinish(rp: RelyingParty, session: HostedSessionTokens, params: Record<string, string>, choice: { organizationId?: string }) {
  const browser = new CookieBrowser();
  const url = oidc.buildAuthorizationUrl(rp.config, {
    redirect_uri: rp.redirectUri, scope: 'openid organizations', state: oidc.randomState(), nonce: oidc.randomNonce(),
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256', ...params,
  });
  const interaction = locationOf(await browser.request(url.href), url.href);
  expect(interaction.pathname).toMatch(/\/oidc\/interaction\/[^/]+$/);
  const details = (await (await browser.request(`${interaction.href}/details`)).json()) as Record<string, unknown>;
  const complete = await completeInteraction(browser, interaction.href, session, choice);
  return { details, status: complete.status, body: (await complete.json()) as { redirectTo?: string; details?: { reason?: string } } };
}

describe('organization picker', () => {
  it('lets a person in two organizations continue with the one they pick: the ID token, userinfo and a refreshed ID token name it', async () => {
    const w = await workspace();
    const person = await member(w, [w.acme, w.globex]);

    const unpicked = await tryToFinish(w.rp, person, {}, {});
    expect(unpicked.details).toMatchObject({ organizationsRequested: true, organizationId: null });
    expect(unpicked.status).toBe(409);
    expect(unpicked.body.details?.reason).toBe('organization_selection_required');

    const tokens = await signIn(w.rp, person, {}, { organizationId: w.globex });
    const jwks = createRemoteJWKSet(new URL(`${w.rp.issuer}/jwks`));
    const { payload } = await jwtVerify(tokens.id_token!, jwks, { issuer: w.rp.issuer, audience: w.rp.clientId });
    expect(payload.organization_id).toBe(w.globex);
    expect((payload.organizations as { id: string }[]).map((o) => o.id).sort()).toEqual([w.acme, w.globex].sort());
    expect((await oidc.fetchUserInfo(w.rp.config, tokens.access_token, person.id)).organization_id).toBe(w.globex);

    const refreshed = await oidc.refreshTokenGrant(w.rp.config, tokens.refresh_token!);
    expect(refreshed.claims()?.organization_id).toBe(w.globex);

    // the next sign-in may pick the other one: the grant now names Acme
    const again = await signIn(w.rp, person, {}, { organizationId: w.acme });
    expect(again.claims()?.organization_id).toBe(w.acme);
  });

  it('skips the picker for a person in one organization and names none for a person in none', async () => {
    const w = await workspace();
    const one = await member(w, [w.acme]);
    const none = await member(w, []);
    const oneTokens = await signIn(w.rp, one, {});
    expect(oneTokens.claims()?.organization_id).toBe(w.acme);
    const noneTokens = await signIn(w.rp, none, {});
    expect(noneTokens.claims()).not.toHaveProperty('organization_id');
    expect(noneTokens.claims()?.organizations).toEqual([]);
  });

  it('takes the organization an application names with organization_id, and refuses a pick of another, a non-member and a malformed id', async () => {
    const w = await workspace();
    const person = await member(w, [w.acme, w.globex]);
    const outsider = await member(w, [w.globex]);

    const named = await signIn(w.rp, person, { organization_id: w.acme });
    expect(named.claims()?.organization_id).toBe(w.acme);

    const mismatch = await tryToFinish(w.rp, person, { organization_id: w.acme }, { organizationId: w.globex });
    expect(mismatch.details).toMatchObject({ organizationsRequested: true, organizationId: w.acme });
    expect([mismatch.status, mismatch.body.details?.reason]).toEqual([400, 'organization_mismatch']);

    const notMember = await tryToFinish(w.rp, outsider, { organization_id: w.acme }, {});
    expect([notMember.status, notMember.body.details?.reason]).toEqual([403, 'organization_membership_required']);

    const browser = new CookieBrowser();
    const malformed = oidc.buildAuthorizationUrl(w.rp.config, {
      redirect_uri: w.rp.redirectUri, scope: 'openid organizations', organization_id: 'not-an-id', state: 'x',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
    });
    const refused = locationOf(await browser.request(malformed.href), malformed.href);
    expect(refused.href.startsWith(w.rp.redirectUri)).toBe(true);
    expect(refused.searchParams.get('error')).toBe('invalid_request');
  });

  it("refuses a pick the application did not ask for, another workspace's organization and a malformed id", async () => {
    const w = await workspace();
    const other = await workspace();
    const person = await member(w, [w.acme, w.globex]);

    const notAsked = await tryToFinish(w.rp, person, { scope: 'openid email' }, { organizationId: w.acme });
    expect(notAsked.details).toMatchObject({ organizationsRequested: false });
    expect([notAsked.status, notAsked.body.details?.reason]).toEqual([400, 'organizations_not_requested']);

    const foreign = await tryToFinish(w.rp, person, {}, { organizationId: other.acme });
    expect([foreign.status, foreign.body.details?.reason]).toEqual([403, 'organization_membership_required']);

    const malformed = await tryToFinish(w.rp, person, {}, { organizationId: 'acme' });
    expect([malformed.status, malformed.body.details?.reason]).toEqual([400, 'validation_failed']);
  });

  it('drops organization_id once the person leaves the picked organization: userinfo and the next refreshed ID token', async () => {
    const w = await workspace();
    const person = await member(w, [w.acme, w.globex]);
    const tokens = await signIn(w.rp, person, {}, { organizationId: w.acme });
    expect(tokens.claims()?.organization_id).toBe(w.acme);

    expect((await suite.api.delete(`/v1/${w.tenant.slug}/organizations/${w.acme}/members/${person.id}`, { token: w.tenant.accessToken })).status).toBe(200);
    expect(await oidc.fetchUserInfo(w.rp.config, tokens.access_token, person.id)).not.toHaveProperty('organization_id');
    const refreshed = await oidc.refreshTokenGrant(w.rp.config, tokens.refresh_token!);
    expect(refreshed.claims()).not.toHaveProperty('organization_id');
    expect(refreshed.claims()?.organizations).toEqual([{ id: w.globex, name: 'Globex', roles: ['owner'] }]);
  });
});
