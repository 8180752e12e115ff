import { calculateJwkThumbprint, createRemoteJWKSet, decodeJwt, exportJWK, jwtVerify, type JWTPayload } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createTenant, signupMember, type TestTenant } from '../helpers/api.js';
import { CookieBrowser, registerRelyingParty, signInThroughProvider, type HostedSessionTokens, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * Organization tokens (docs/oidc.md "Organization tokens", docs/organizations.md "Tokens"): the
 * workspace's token endpoint, `grant_type=refresh_token` with `organization_id`, through openid-client;
 * each token verified with jose against the workspace's JWKS.
 */

const suite = useTestServerAtPublicUrl();

async function post(tenant: TestTenant, path: string, body: Record<string, unknown>) {
  const res = await suite.api.post(`/v1/${tenant.slug}/${path}`, body, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Signs in through the provider; a person in several organizations picks `organizationId` on the hosted page. */
async function signIn(rp: RelyingParty, session: HostedSessionTokens, scope = 'openid offline_access organizations', organizationId?: string) {
  const result = await signInThroughProvider(rp, new CookieBrowser(), session, { scope }, { organizationId });
  const tokens = await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
  expect(tokens.refresh_token).toBeTruthy();
  return tokens;
}

/** A workspace with roles `owner` (manage:members, read:invoices) and `billing` (pay:invoices, read:invoices), organizations Acme and Globex, a web application. */
async function workspace() {
  const tenant = await createTenant(suite.api);
  await post(tenant, 'organization-roles', { name: 'owner', permissions: ['manage:members', 'read:invoices'] });
  await post(tenant, 'organization-roles', { name: 'billing', permissions: ['read:invoices', 'pay:invoices'] });
  const acme = (await post(tenant, 'organizations', { name: 'Acme' })).organization.id as string;
  const globex = (await post(tenant, 'organizations', { name: 'Globex' })).organization.id as string;
  const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
  const jwks = createRemoteJWKSet(new URL(`${rp.issuer}/jwks`));
  return { tenant, acme, globex, rp, jwks };
}

type Workspace = Awaited<ReturnType<typeof workspace>>;

/** A member of the workspace in `memberships` (organization id → role names). */
async function member(w: Workspace, memberships: Record<string, string[]>) {
  const person = await signupMember(suite.api, w.tenant.slug);
  for (const [organizationId, roles] of Object.entries(memberships)) await post(w.tenant, `organizations/${organizationId}/members`, { userId: person.id, roles });
  return person;
}

/** The refresh token the application holds, rotated at every use, as an application keeps it. */
class Holder {
  constructor(private readonly rp: RelyingParty, public refreshToken: string) {}

  async refresh(parameters: Record<string, string> = {}) {
    const answer = await oidc.refreshTokenGrant(this.rp.config, this.refreshToken, parameters);
    expect(answer.refresh_token).toBeTruthy();
    expect(answer.refresh_token).not.toBe(this.refreshToken);
    this.refreshToken = answer.refresh_token!;
    return answer;
  }

  organizationToken(organizationId: string, scope?: string) {
    return this.refresh(scope === undefined ? { organization_id: organizationId } : { organization_id: organizationId, scope });
  }
}

async function verified(w: Workspace, token: string, organizationId: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, w.jwks, { issuer: w.rp.issuer, audience: `urn:organization:${organizationId}`, typ: 'at+jwt' });
  return payload;
}

describe('organization tokens', () => {
  it('gives one person in two organizations, for each, a JWT naming the organization with only the asked-for permissions their roles grant there', async () => {
    const w = await workspace();
    const person = await member(w, { [w.acme]: ['owner'], [w.globex]: ['billing'] });
    const holder = new Holder(w.rp, (await signIn(w.rp, person, undefined, w.globex)).refresh_token!);
    const asked = 'manage:members read:invoices pay:invoices';

    const acme = await holder.organizationToken(w.acme, asked);
    expect(acme.token_type.toLowerCase()).toBe('bearer');
    expect(acme.scope).toBe('manage:members read:invoices');
    expect(acme.expires_in).toBe(3600);
    const acmeClaims = await verified(w, acme.access_token, w.acme);
    expect(acmeClaims).toMatchObject({ sub: person.id, client_id: w.rp.clientId, organization_id: w.acme, aud: `urn:organization:${w.acme}`, scope: 'manage:members read:invoices' });

    const globex = await holder.organizationToken(w.globex, asked);
    expect(globex.scope).toBe('pay:invoices read:invoices');
    expect(await verified(w, globex.access_token, w.globex)).toMatchObject({ sub: person.id, organization_id: w.globex, scope: 'pay:invoices read:invoices' });
    // one organization's token is not the other's
    await expect(jwtVerify(globex.access_token, w.jwks, { issuer: w.rp.issuer, audience: `urn:organization:${w.acme}` })).rejects.toThrow();

    // a permission the roles do not grant is left out: here nothing is left
    const notGranted = await holder.organizationToken(w.acme, 'pay:invoices');
    expect(notGranted.scope).toBe('');
    const bare = await verified(w, notGranted.access_token, w.acme);
    expect(bare.organization_id).toBe(w.acme);
    expect(bare.scope).toBeUndefined();
    // without `scope`, every permission the roles grant
    expect((await holder.organizationToken(w.globex)).scope).toBe('pay:invoices read:invoices');
    // the ID token of the answer is the person's, as on a plain refresh
    expect(decodeJwt(acme.id_token!)).toMatchObject({ sub: person.id, aud: w.rp.clientId });
  });

  it('reads the roles afresh: a role change applies to the next organization token', async () => {
    const w = await workspace();
    const person = await member(w, { [w.acme]: ['billing'] });
    const holder = new Holder(w.rp, (await signIn(w.rp, person)).refresh_token!);
    expect((await holder.organizationToken(w.acme, 'manage:members pay:invoices')).scope).toBe('pay:invoices');
    const changed = await suite.api.patch(`/v1/${w.tenant.slug}/organizations/${w.acme}/members/${person.id}`, { roles: ['owner'] }, { token: w.tenant.accessToken });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect((await holder.organizationToken(w.acme, 'manage:members pay:invoices')).scope).toBe('manage:members');
  });

  it('stops at once when the person is removed from the organization; the refused request leaves the refresh token usable', async () => {
    const w = await workspace();
    const person = await member(w, { [w.acme]: ['owner'], [w.globex]: ['billing'] });
    const holder = new Holder(w.rp, (await signIn(w.rp, person, undefined, w.globex)).refresh_token!);
    await holder.organizationToken(w.acme, 'read:invoices');

    expect((await suite.api.delete(`/v1/${w.tenant.slug}/organizations/${w.acme}/members/${person.id}`, { token: w.tenant.accessToken })).status).toBe(200);
    await expect(holder.organizationToken(w.acme, 'read:invoices')).rejects.toMatchObject({ error: 'invalid_grant' });
    // not rotated by the refusal: the same refresh token still serves the other organization and a plain refresh
    expect((await holder.organizationToken(w.globex, 'read:invoices')).scope).toBe('read:invoices');
    await holder.refresh();
  });

  it('refuses a non-member, an organization of another workspace, a deleted organization and a suspended person with invalid_grant', async () => {
    const w = await workspace();
    const other = await workspace();
    const person = await member(w, { [w.acme]: ['owner'], [w.globex]: ['billing'] });
    const holder = new Holder(w.rp, (await signIn(w.rp, person, undefined, w.globex)).refresh_token!);
    const stranger = await member(w, { [w.globex]: ['billing'] });
    const strangerHolder = new Holder(w.rp, (await signIn(w.rp, stranger)).refresh_token!);

    await expect(strangerHolder.organizationToken(w.acme, 'read:invoices')).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(holder.organizationToken(other.acme, 'read:invoices')).rejects.toMatchObject({ error: 'invalid_grant' });
    // a well-formed id nobody has
    await expect(holder.organizationToken('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ error: 'invalid_grant' });

    expect((await suite.api.delete(`/v1/${w.tenant.slug}/organizations/${w.acme}`, { token: w.tenant.accessToken })).status).toBe(200);
    await expect(holder.organizationToken(w.acme, 'read:invoices')).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await holder.organizationToken(w.globex, 'read:invoices')).scope).toBe('read:invoices');

    expect((await suite.api.patch(`/v1/${w.tenant.slug}/users/${person.id}`, { status: 'Suspended' }, { token: w.tenant.accessToken })).status).toBe(200);
    await expect(holder.organizationToken(w.globex, 'read:invoices')).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('needs a refresh token granted the organizations scope (invalid_scope), refuses a malformed id and organization_id with resource (invalid_request)', async () => {
    const w = await workspace();
    const person = await member(w, { [w.acme]: ['owner'] });
    const withoutScope = new Holder(w.rp, (await signIn(w.rp, person, 'openid offline_access')).refresh_token!);
    await expect(withoutScope.organizationToken(w.acme, 'read:invoices')).rejects.toMatchObject({ error: 'invalid_scope' });
    // the refusal did not spend it
    await withoutScope.refresh();

    const holder = new Holder(w.rp, (await signIn(w.rp, person)).refresh_token!);
    await expect(holder.organizationToken('acme')).rejects.toMatchObject({ error: 'invalid_request' });
    await expect(holder.refresh({ organization_id: w.acme, resource: 'https://api.example.com/' })).rejects.toMatchObject({ error: 'invalid_request' });
    expect((await holder.organizationToken(w.acme, 'read:invoices')).scope).toBe('read:invoices');
    // an organization audience is no API resource on a plain refresh (last: oidc-provider's plain refresh
    // rotates the refresh token before it checks `resource`)
    await expect(holder.refresh({ resource: `urn:organization:${w.acme}` })).rejects.toMatchObject({ error: 'invalid_target' });
  });

  it('treats a used refresh token as a replay: refused, and the whole grant ends', async () => {
    const w = await workspace();
    const person = await member(w, { [w.acme]: ['owner'] });
    const holder = new Holder(w.rp, (await signIn(w.rp, person)).refresh_token!);
    const used = holder.refreshToken;
    await holder.organizationToken(w.acme, 'read:invoices');
    await expect(oidc.refreshTokenGrant(w.rp.config, used, { organization_id: w.acme })).rejects.toMatchObject({ error: 'invalid_grant' });
    // the replay revoked the grant: the newest refresh token is refused too
    await expect(holder.refresh()).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('keeps a DPoP-bound refresh token (public application) bound: the organization token is DPoP-bound to the same key, a request without the key is refused', async () => {
    const w = await workspace();
    const person = await member(w, { [w.acme]: ['owner'] });
    const spa = await registerRelyingParty(suite.api, w.tenant, suite.publicUrl, 'spa');
    const keyPair = await oidc.randomDPoPKeyPair();
    const dpop = oidc.getDPoPHandle(spa.config, keyPair);
    const result = await signInThroughProvider(spa, new CookieBrowser(), person, { scope: 'openid offline_access organizations' });
    const tokens = await oidc.authorizationCodeGrant(
      spa.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce }, undefined, { DPoP: dpop },
    );
    expect(tokens.token_type.toLowerCase()).toBe('dpop');

    await expect(oidc.refreshTokenGrant(spa.config, tokens.refresh_token!, { organization_id: w.acme })).rejects.toMatchObject({ error: 'invalid_grant' });
    const organization = await oidc.refreshTokenGrant(spa.config, tokens.refresh_token!, { organization_id: w.acme, scope: 'read:invoices' }, { DPoP: dpop });
    expect(organization.token_type.toLowerCase()).toBe('dpop');
    const claims = await verified(w, organization.access_token, w.acme);
    expect(claims).toMatchObject({ organization_id: w.acme, scope: 'read:invoices', client_id: spa.clientId });
    expect((claims.cnf as { jkt?: string } | undefined)?.jkt).toBe(await calculateJwkThumbprint(await exportJWK(keyPair.publicKey)));
  });

  it('leaves a plain refresh as it was: rotated, an opaque access token for userinfo, the used token refused', async () => {
    const w = await workspace();
    const person = await member(w, { [w.acme]: ['owner'] });
    const first = await signIn(w.rp, person, 'openid email offline_access organizations');
    const holder = new Holder(w.rp, first.refresh_token!);
    const plain = await holder.refresh();
    expect(plain.access_token.split('.')).toHaveLength(1);
    expect(plain.scope?.split(' ').sort()).toEqual(['email', 'offline_access', 'openid', 'organizations']);
    const info = await oidc.fetchUserInfo(w.rp.config, plain.access_token, person.id);
    expect(info).toMatchObject({ sub: person.id, email: person.email, organizations: [{ id: w.acme, name: 'Acme', roles: ['owner'] }] });
    await expect(oidc.refreshTokenGrant(w.rp.config, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
