import type { EntityManager } from '@mikro-orm/postgresql';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { completeInteraction, CookieBrowser, locationOf, registerRelyingParty, signInThroughProvider, type HostedSessionTokens, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * Each tenant as an OpenID Provider, tried as a relying party would: openid-client against the
 * running service, the ID token verified with jose against the published JWKS (docs/oidc.md).
 */

const suite = useTestServerAtPublicUrl();

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (suite.server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

async function apiKey(tenant: TestTenant, environment: 'live' | 'test'): Promise<string> {
  const res = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: environment, environment }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.plaintext as string;
}

/** A full sign-in of `member` at `rp`, code exchanged for tokens. */
async function signIn(rp: RelyingParty, session: HostedSessionTokens, browser = new CookieBrowser(), params: Record<string, string> = {}) {
  const result = await signInThroughProvider(rp, browser, session, params);
  const tokens = await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
  return { tokens, browser, result };
}

describe('discovery and keys', () => {
  it('publishes a discovery document at the tenant issuer with every endpoint, and RS256 and ES256 keys in its JWKS', async () => {
    const tenant = await createTenant(suite.api);
    const issuer = `${suite.publicUrl}/v1/${tenant.slug}/oidc`;
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc.issuer).toBe(issuer);
    for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint', 'introspection_endpoint', 'revocation_endpoint', 'end_session_endpoint']) {
      expect(typeof doc[endpoint], endpoint).toBe('string');
    }
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect([...(doc.id_token_signing_alg_values_supported as string[])].sort()).toEqual(['ES256', 'RS256']);
    const jwks = (await (await fetch(doc.jwks_uri as string)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    for (const key of jwks.keys) {
      if (key.alg === 'ES256') expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig' });
      else expect(key).toMatchObject({ kty: 'RSA', e: 'AQAB', use: 'sig' });
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key[secret], secret).toBeUndefined();
    }
    const stored = await sql<{ alg: string; private_jwk_enc: string }>('select alg, private_jwk_enc from oidc_signing_key where tenant_id = ?', [tenant.id]);
    expect(stored.map((row) => row.alg).sort()).toEqual(['ES256', 'RS256']);
    for (const row of stored) expect(row.private_jwk_enc).not.toContain('"d"');
  });

  it('answers 404 in the envelope for an unknown tenant', async () => {
    const res = await suite.api.get('/v1/no-such-tenant-anywhere/oidc/.well-known/openid-configuration');
    expectError(res, 404, 'NOT_FOUND', 'tenant_not_found');
  });

  it('keeps the previous public key in the JWKS after a rotation, so tokens it signed still verify', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl);
    const { tokens } = await signIn(rp, member);
    const oldKid = decodeProtectedHeader(tokens.id_token!).kid;
    await suite.server.services.signingKeys.rotate(suite.server.services.orm.em.fork() as EntityManager, tenant.id);
    suite.server.services.oidc.forget(tenant.id);
    const jwks = createRemoteJWKSet(new URL(`${rp.issuer}/jwks`));
    await expect(jwtVerify(tokens.id_token!, jwks, { issuer: rp.issuer, audience: rp.clientId })).resolves.toBeTruthy();
    const again = await signIn(rp, member);
    expect(decodeProtectedHeader(again.tokens.id_token!).kid).not.toBe(oldKid);
  });
});

describe('authorization code with PKCE', () => {
  it('signs a member in to a web application: ID token verified against the JWKS, userinfo, refresh rotation, reuse refused', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const { tokens } = await signIn(rp, member);

    const jwks = createRemoteJWKSet(new URL(`${rp.issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, jwks, { issuer: rp.issuer, audience: rp.clientId });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload.sub).toBe(member.id);
    // the claims of the scope asked are in the ID token too, without a `resource` (conformIdTokenClaims off)
    expect(payload).toMatchObject({ email: member.email, email_verified: false });

    const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, member.id);
    expect(info).toMatchObject({ sub: member.id, email: member.email, email_verified: false });

    expect(tokens.refresh_token).toBeTruthy();
    const refreshed = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(oidc.refreshTokenGrant(rp.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // reuse of a rotated token ends the grant: the successor is refused too
    await expect(oidc.refreshTokenGrant(rp.config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

    const audit = await sql<{ details: Record<string, unknown> }>(`select details from audit_event where tenant_id = ? and action = 'OidcSignIn'`, [tenant.id]);
    expect(audit.map((a) => a.details.clientId)).toContain(rp.clientId);
  });

  it('signs a member in to a public SPA with PKCE, and refuses the SPA without PKCE', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'spa');
    expect(rp.clientSecret).toBeUndefined();
    const { tokens } = await signIn(rp, member);
    expect(tokens.access_token).toBeTruthy();

    const noPkce = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: rp.redirectUri, scope: 'openid', state: oidc.randomState() });
    const res = await new CookieBrowser().request(noPkce.href);
    const target = locationOf(res, noPkce.href);
    expect(target.href.startsWith(rp.redirectUri)).toBe(true);
    expect(target.searchParams.get('error')).toBe('invalid_request');
    expect(target.searchParams.get('code')).toBeNull();
  });

  it('never sends a code to an unregistered redirect URI', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const browser = new CookieBrowser();
    const url = oidc.buildAuthorizationUrl(rp.config, {
      redirect_uri: 'https://evil.example.com/callback', scope: 'openid', state: 's', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
    });
    const res = await browser.request(url.href);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('redirect_uri');
    void member;
  });

  it('refuses a replayed authorization code', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const result = await signInThroughProvider(rp, new CookieBrowser(), member);
    await oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
    await expect(
      oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('signs in to a second application without asking again (single sign-on), unless prompt=login asks', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const first = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const second = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'spa');
    const browser = new CookieBrowser();
    await signIn(first, member, browser);
    // the provider session in this browser is enough: no interaction for the login any more
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(second.config, {
      redirect_uri: second.redirectUri, scope: 'openid email', state: 'sso', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const res = await browser.request(url.href);
    const target = locationOf(res, url.href);
    expect(target.href.startsWith(second.redirectUri), target.href).toBe(true);
    expect(target.searchParams.get('code')).toBeTruthy();

    // prompt=login: the hosted session that signed in before the request is not enough (auth_time is in seconds)
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const forced = oidc.buildAuthorizationUrl(second.config, {
      redirect_uri: second.redirectUri, scope: 'openid', prompt: 'login', state: 'x', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const toInteraction = locationOf(await browser.request(forced.href), forced.href);
    expect(toInteraction.pathname).toMatch(/\/oidc\/interaction\//);
    await browser.request(toInteraction.href);
    const stale = await completeInteraction(browser, toInteraction.href, member);
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { details: { reason: string } }).details.reason).toBe('fresh_sign_in_required');
    const fresh = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD });
    const done = await completeInteraction(browser, toInteraction.href, fresh.body as HostedSessionTokens);
    expect(done.status).toBe(200);
  });
});

describe('JWT access tokens for the tenant\'s own APIs (RFC 9068, RFC 8707)', () => {
  it('issues an ES256 JWT access token for a registered API resource, verifiable against the JWKS', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const resource = 'https://app.example.com/api';
    const auth = { token: tenant.accessToken };
    expect((await suite.api.post(`/v1/${tenant.slug}/api-resources`, { name: 'API', identifier: resource, permissions: [{ name: 'api' }] }, auth)).status).toBe(200);
    const role = await suite.api.post(`/v1/${tenant.slug}/roles`, { name: 'API user', permissions: [{ resource, permission: 'api' }] }, auth);
    expect((await suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [role.body.role.id] }, auth)).status).toBe(200);
    const { tokens } = await signIn(rp, member, new CookieBrowser(), { resource, scope: 'openid email offline_access api' });
    const jwks = createRemoteJWKSet(new URL(`${rp.issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer: rp.issuer, audience: resource, typ: 'at+jwt' });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: member.id, client_id: rp.clientId, scope: 'api' });
    // the refreshed access token is for the same API
    const refreshed = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token!);
    await expect(jwtVerify(refreshed.access_token, jwks, { issuer: rp.issuer, audience: resource })).resolves.toBeTruthy();

    const m2m = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    const m2mId = (await suite.api.get(`/v1/${tenant.slug}/applications`, auth)).body.items.find((a: { clientId: string }) => a.clientId === m2m.clientId).id as string;
    expect((await suite.api.put(`/v1/${tenant.slug}/applications/${m2mId}/roles`, { roleIds: [role.body.role.id] }, auth)).status).toBe(200);
    const machine = await oidc.clientCredentialsGrant(m2m.config, { resource, scope: 'api' });
    const verified = await jwtVerify(machine.access_token, jwks, { issuer: rp.issuer, audience: resource });
    expect(verified.payload).toMatchObject({ client_id: m2m.clientId, scope: 'api' });
  });

  it('refuses a resource that is not an API of the workspace', async () => {
    const tenant = await createTenant(suite.api);
    const m2m = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    await expect(oidc.clientCredentialsGrant(m2m.config, { resource: 'https://someone-else.example.net/api', scope: 'api' })).rejects.toMatchObject({ error: 'invalid_target' });
  });
});

describe('the personal-data export', () => {
  it('lists what the provider granted the workspace\'s applications for the person: client, name, scopes, per-API permissions, when; never the grant id or a token', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const peer = await signupMember(suite.api, tenant.slug);
    const stranger = await signupMember(suite.api, other.slug);
    const auth = { token: tenant.accessToken };
    const resource = 'https://app.example.com/export-api';
    expect((await suite.api.post(`/v1/${tenant.slug}/api-resources`, { name: 'API', identifier: resource, permissions: [{ name: 'api' }] }, auth)).status).toBe(200);
    const web = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const spa = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'spa');
    const before = Date.now() - 1000;
    const { tokens } = await signIn(web, member, new CookieBrowser(), { resource, scope: 'openid email offline_access api' });
    // another person of the workspace at another application, and a person of another workspace
    await signIn(spa, peer);
    const foreign = await registerRelyingParty(suite.api, other, suite.publicUrl, 'web');
    await signIn(foreign, stranger);

    const res = await suite.api.get(`/v1/${tenant.slug}/me/export`, { token: member.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const grants = res.body.applicationGrants as { clientId: string; applicationName: string; scopes: string[]; resources: unknown[]; grantedAt: string; expiresAt: string }[];
    expect(grants).toEqual([{
      clientId: web.clientId, applicationName: 'App web', scopes: expect.arrayContaining(['openid', 'email', 'offline_access']),
      resources: [{ resource, scopes: ['api'] }], grantedAt: expect.any(String), expiresAt: expect.any(String),
      selectedOrganizationId: null, // no scope `organizations` asked, no organization picked
    }]);
    expect(Date.parse(grants[0]!.grantedAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(grants[0]!.expiresAt)).toBeGreaterThan(Date.now());
    // the hosted session that signed in names the application; the member's other sessions none
    const sid = decodeJwt(member.accessToken).sid as string;
    const sessions = res.body.sessions as { id: string; applications: { firstSignedInAt: string; lastSignedInAt: string }[] }[];
    expect(sessions.map((s) => s.id)).toContain(sid);
    for (const session of sessions) {
      if (session.id !== sid) expect(session.applications, session.id).toEqual([]);
    }
    const signedIn = sessions.find((s) => s.id === sid)!.applications;
    expect(signedIn).toEqual([{ clientId: web.clientId, applicationName: 'App web', firstSignedInAt: expect.any(String), lastSignedInAt: expect.any(String) }]);
    expect(Date.parse(signedIn[0]!.firstSignedInAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(signedIn[0]!.lastSignedInAt)).toBeGreaterThanOrEqual(Date.parse(signedIn[0]!.firstSignedInAt));

    const text = JSON.stringify(res.body);
    for (const clientId of [spa.clientId, foreign.clientId]) expect(text).not.toContain(clientId);
    // a sign-in with prompt=consent keeps one grant: the consent extends the one made after the login step
    const stored = await sql<{ id: string }>(`select id from oidc_payload where tenant_id = ? and account_id = ? and model = 'Grant'`, [tenant.id, member.id]);
    expect(stored).toHaveLength(1);
    for (const secret of [...stored.map((row) => row.id), tokens.access_token, tokens.refresh_token!, tokens.id_token!]) expect(text).not.toContain(secret);

    // the peer's export names their application only
    const peerExport = await suite.api.get(`/v1/${tenant.slug}/users/${peer.id}/export`, auth);
    expect((peerExport.body.applicationGrants as { clientId: string }[]).map((g) => g.clientId)).toEqual([spa.clientId]);
    const peerSignIns = (peerExport.body.sessions as { applications: { clientId: string }[] }[]).flatMap((s) => s.applications.map((a) => a.clientId));
    expect(peerSignIns).toEqual([spa.clientId]);
    // signing out everywhere ends the grants and the records of the sessions' sign-ins, and the export says so
    expect((await suite.api.post(`/v1/${tenant.slug}/auth/logout-all`, undefined, { token: peer.accessToken })).status).toBe(200);
    const fresh = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: peer.email, password: PASSWORD });
    const after = (await suite.api.get(`/v1/${tenant.slug}/me/export`, { token: fresh.body.accessToken as string })).body;
    expect(after.applicationGrants).toEqual([]);
    expect((after.sessions as { applications: unknown[] }[]).flatMap((s) => s.applications)).toEqual([]);
  });

  it('names the organization the person picked for an application that asked for scope organizations, per application', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const auth = { token: tenant.accessToken };
    const organizationIds: string[] = [];
    for (const name of ['Acme', 'Globex']) {
      const created = await suite.api.post(`/v1/${tenant.slug}/organizations`, { name }, auth);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      organizationIds.push(created.body.organization.id as string);
      const added = await suite.api.post(`/v1/${tenant.slug}/organizations/${created.body.organization.id}/members`, { userId: member.id }, auth);
      expect(added.status, JSON.stringify(added.body)).toBe(200);
    }
    const [acme, globex] = organizationIds as [string, string];
    const picking = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const plain = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'spa');
    const browser = new CookieBrowser();
    const picked = await signInThroughProvider(picking, browser, member, { scope: 'openid organizations' }, { organizationId: globex });
    const tokens = await oidc.authorizationCodeGrant(picking.config, picked.callback, { pkceCodeVerifier: picked.verifier, expectedState: picked.state, expectedNonce: picked.nonce });
    expect(tokens.claims()?.organization_id).toBe(globex);
    await signIn(plain, member, browser);

    const exported = async () => {
      const res = await suite.api.get(`/v1/${tenant.slug}/me/export`, { token: member.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as {
        applicationGrants: { clientId: string; selectedOrganizationId: string | null }[];
        sessions: { applications: { clientId: string; firstSignedInAt: string; lastSignedInAt: string }[] }[];
      };
    };
    const data = await exported();
    const picks = Object.fromEntries(data.applicationGrants.map((g) => [g.clientId, g.selectedOrganizationId]));
    expect(picks).toEqual({ [picking.clientId]: globex, [plain.clientId]: null });
    // one hosted session signed in to both applications
    expect(data.sessions.flatMap((s) => s.applications.map((a) => a.clientId)).sort()).toEqual([picking.clientId, plain.clientId].sort());

    // a later sign-in that picks the other organization replaces the pick
    await signInThroughProvider(picking, browser, member, { scope: 'openid organizations' }, { organizationId: acme });
    const again = await exported();
    expect(again.applicationGrants.find((g) => g.clientId === picking.clientId)?.selectedOrganizationId).toBe(acme);
    // the session's sign-in to that application keeps its first time and moves its last
    const signInTo = (d: typeof data) => d.sessions.flatMap((s) => s.applications).find((a) => a.clientId === picking.clientId)!;
    expect(signInTo(again).firstSignedInAt).toBe(signInTo(data).firstSignedInAt);
    expect(Date.parse(signInTo(again).lastSignedInAt)).toBeGreaterThan(Date.parse(signInTo(data).lastSignedInAt));
  });
});

describe('tokens for servers', () => {
  it('issues client_credentials to an m2m application, introspects and revokes', async () => {
    const tenant = await createTenant(suite.api);
    const m2m = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    const grant = await oidc.clientCredentialsGrant(m2m.config);
    expect(grant.access_token).toBeTruthy();
    const active = await oidc.tokenIntrospection(m2m.config, grant.access_token);
    expect(active.active).toBe(true);
    expect(active.client_id).toBe(m2m.clientId);
    await oidc.tokenRevocation(m2m.config, grant.access_token);
    expect((await oidc.tokenIntrospection(m2m.config, grant.access_token)).active).toBe(false);
  });

  it('introspects a user\'s token for any confidential application of the tenant, and no other tenant\'s', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const web = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const resourceServer = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    const foreign = await registerRelyingParty(suite.api, other, suite.publicUrl, 'm2m');
    const { tokens } = await signIn(web, member);
    const seen = await oidc.tokenIntrospection(resourceServer.config, tokens.access_token);
    expect(seen).toMatchObject({ active: true, sub: member.id, client_id: web.clientId });
    expect((await oidc.tokenIntrospection(foreign.config, tokens.access_token)).active).toBe(false);
  });

  it('does not know a client of another tenant (no issuer mix-up)', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    const elsewhere = await oidc.discovery(new URL(`${suite.publicUrl}/v1/${other.slug}/oidc`), rp.clientId, rp.clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
    await expect(oidc.clientCredentialsGrant(elsewhere)).rejects.toMatchObject({ error: 'invalid_client' });
  });
});

describe('ending access', () => {
  it('refuses a suspended user\'s refresh token and userinfo', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const { tokens } = await signIn(rp, member);
    await sql(`update app_user set status = 'Suspended' where id = ?`, [member.id]);
    await expect(oidc.refreshTokenGrant(rp.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.fetchUserInfo(rp.config, tokens.access_token, member.id)).rejects.toBeTruthy();
  });

  it('ends every token of a deleted application at once', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const resourceServer = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    const { tokens } = await signIn(rp, member);
    const apps = await suite.api.get(`/v1/${tenant.slug}/applications`, { token: tenant.accessToken });
    const id = (apps.body.items as { id: string; clientId: string }[]).find((a) => a.clientId === rp.clientId)!.id;
    expect((await suite.api.delete(`/v1/${tenant.slug}/applications/${id}`, { token: tenant.accessToken })).status).toBe(200);
    expect((await oidc.tokenIntrospection(resourceServer.config, tokens.access_token)).active).toBe(false);
    expect((await oidc.tokenIntrospection(resourceServer.config, tokens.refresh_token!)).active).toBe(false);
  });

  it('RP-initiated logout ends the provider session and the hosted session that signed in, and refuses an unregistered post-logout URI', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const { tokens, browser } = await signIn(rp, member);

    const evil = oidc.buildEndSessionUrl(rp.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example.com/' });
    const refused = await browser.request(evil.href);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();

    const end = oidc.buildEndSessionUrl(rp.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://app.example.com/signed-out' });
    const page = await browser.request(end.href);
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = /action="([^"]+)"/.exec(html)![1]!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;
    const done = await browser.request(new URL(action, end.href).href, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
    });
    expect([302, 303]).toContain(done.status);
    expect(locationOf(done, end.href).href).toBe('https://app.example.com/signed-out');
    await expect.poll(async () => (await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(401);
  });
});

describe('applications API', () => {
  it('creates, lists, reads, changes, rotates and deletes, never showing a secret after creation', async () => {
    const tenant = await createTenant(suite.api);
    const created = await suite.api.post(`/v1/${tenant.slug}/applications`, { name: 'Billing', type: 'web', redirectUris: ['https://billing.example.com/cb'] }, { token: tenant.accessToken });
    expect(created.status).toBe(200);
    expect(created.body.clientSecret).toMatch(/^cs_[A-Za-z0-9]{43}$/);
    const id = created.body.application.id as string;
    const list = await suite.api.get(`/v1/${tenant.slug}/applications`, { token: tenant.accessToken });
    expect(JSON.stringify(list.body)).not.toContain(created.body.clientSecret);
    expect(list.body.items).toHaveLength(1);
    const [row] = await sql<{ client_secret_enc: string }>('select client_secret_enc from oidc_application where id = ?', [id]);
    expect(row!.client_secret_enc).not.toContain(created.body.clientSecret);
    const patched = await suite.api.patch(`/v1/${tenant.slug}/applications/${id}`, { name: 'Billing 2', redirectUris: ['http://localhost:3001/cb'] }, { token: tenant.accessToken });
    expect(patched.body).toMatchObject({ name: 'Billing 2', redirectUris: ['http://localhost:3001/cb'] });
    const rotated = await suite.api.post(`/v1/${tenant.slug}/applications/${id}/rotate-secret`, undefined, { token: tenant.accessToken });
    expect(rotated.body.clientSecret).not.toBe(created.body.clientSecret);
    expect((await suite.api.delete(`/v1/${tenant.slug}/applications/${id}`, { token: tenant.accessToken })).status).toBe(200);
    expectError(await suite.api.get(`/v1/${tenant.slug}/applications/${id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    const actions = await sql<{ action: string }>(`select action from audit_event where tenant_id = ? and target_type = 'application' order by created_at, id`, [tenant.id]);
    expect(actions.map((a) => a.action)).toEqual(['ApplicationCreated', 'ApplicationUpdated', 'ApplicationSecretRotated', 'ApplicationDeleted']);
  });

  it('refuses redirect URIs that are not https, loopback http, or a native private-use scheme', async () => {
    const tenant = await createTenant(suite.api);
    for (const [type, uri] of [['web', 'http://app.example.com/cb'], ['web', 'com.example.app:/cb'], ['spa', 'javascript:alert(1)'], ['web', 'https://a.example.com/cb#frag'], ['web', '/relative']]) {
      const res = await suite.api.post(`/v1/${tenant.slug}/applications`, { name: 'X', type, redirectUris: [uri] }, { token: tenant.accessToken });
      expectError(res, 400, 'BAD_REQUEST', 'invalid_redirect_uri');
    }
    const native = await suite.api.post(`/v1/${tenant.slug}/applications`, { name: 'Mobile', type: 'native', redirectUris: ['com.example.app:/cb'] }, { token: tenant.accessToken });
    expect(native.status).toBe(200);
    expect(native.body.clientSecret).toBeUndefined();
  });

  it('is refused to a Member, to another tenant\'s admin, and on secrets to a test API key', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const created = await suite.api.post(`/v1/${tenant.slug}/applications`, { name: 'A', type: 'm2m' }, { token: tenant.accessToken });
    const id = created.body.application.id as string;
    expectError(await suite.api.get(`/v1/${tenant.slug}/applications`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expectError(await suite.api.get(`/v1/${tenant.slug}/applications/${id}`, { token: other.accessToken }), 401, 'UNAUTHORIZED', 'tenant_mismatch');
    expectError(await suite.api.get(`/v1/${other.slug}/applications/${id}`, { token: other.accessToken }), 404, 'NOT_FOUND');
    const testKey = await apiKey(tenant, 'test');
    expect((await suite.api.get(`/v1/${tenant.slug}/applications`, { token: testKey })).status).toBe(200);
    expectError(await suite.api.post(`/v1/${tenant.slug}/applications/${id}/rotate-secret`, undefined, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');
    expectError(await suite.api.post(`/v1/${tenant.slug}/applications`, { name: 'B', type: 'web', redirectUris: ['https://b.example.com/cb'] }, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');
    expectError(await suite.api.delete(`/v1/${tenant.slug}/applications/${id}`, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');
    const liveKey = await apiKey(tenant, 'live');
    expect((await suite.api.post(`/v1/${tenant.slug}/applications/${id}/rotate-secret`, undefined, { token: liveKey })).status).toBe(200);
  });
});
