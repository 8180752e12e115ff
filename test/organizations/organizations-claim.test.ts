import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createTenant, signupMember, type TestTenant } from '../helpers/api.js';
import { CookieBrowser, registerRelyingParty, signInThroughProvider, type HostedSessionTokens, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/** Scope `organizations`: the claim `organizations` ([{id, name, roles}]) at userinfo (docs/organizations.md "Tokens"). */

const suite = useTestServerAtPublicUrl();

async function signIn(rp: RelyingParty, session: HostedSessionTokens, scope: string, organizationId?: string) {
  const result = await signInThroughProvider(rp, new CookieBrowser(), session, { scope }, { organizationId });
  return oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
}

async function post(tenant: TestTenant, path: string, body: Record<string, unknown>) {
  const res = await suite.api.post(`/v1/${tenant.slug}/${path}`, body, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('scope organizations', () => {
  it('lists each organization of the person with their roles there; without the scope no claim; a removal shows at once', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    await post(tenant, 'organization-roles', { name: 'owner', permissions: ['manage:members'] });
    await post(tenant, 'organization-roles', { name: 'billing', permissions: ['read:invoices'] });
    const acme = (await post(tenant, 'organizations', { name: 'Acme' })).organization as { id: string };
    const globex = (await post(tenant, 'organizations', { name: 'Globex' })).organization as { id: string };
    await post(tenant, `organizations/${acme.id}/members`, { userId: member.id, roles: ['owner'] });
    await post(tenant, `organizations/${globex.id}/members`, { userId: member.id, roles: ['billing'] });
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl);

    const discovery = (await (await fetch(`${rp.issuer}/.well-known/openid-configuration`)).json()) as { scopes_supported: string[]; claims_supported: string[] };
    expect(discovery.scopes_supported).toContain('organizations');
    expect(discovery.claims_supported).toContain('organizations');

    const tokens = await signIn(rp, member, 'openid organizations', acme.id);
    const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, member.id);
    expect(info.organizations).toEqual([
      { id: acme.id, name: 'Acme', roles: ['owner'] },
      { id: globex.id, name: 'Globex', roles: ['billing'] },
    ]);

    const without = await signIn(rp, member, 'openid email');
    expect((await oidc.fetchUserInfo(rp.config, without.access_token, member.id)).organizations).toBeUndefined();

    expect((await suite.api.delete(`/v1/${tenant.slug}/organizations/${acme.id}/members/${member.id}`, { token: tenant.accessToken })).status).toBe(200);
    const after = await oidc.fetchUserInfo(rp.config, tokens.access_token, member.id);
    expect(after.organizations).toEqual([{ id: globex.id, name: 'Globex', roles: ['billing'] }]);
  });
});
