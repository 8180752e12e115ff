import type { EntityManager } from '@mikro-orm/postgresql';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { Migration20261126120000_access_control } from '../../src/migrations/Migration20261126120000_access_control.js';
import { createTenant, signupMember, type TestTenant } from '../helpers/api.js';
import { CookieBrowser, registerRelyingParty, signInThroughProvider, type HostedSessionTokens, type RelyingParty } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * Access tokens for the tenant's own APIs as a customer's backend sees them (CONTRACT "Roles and
 * permissions", docs/oidc.md "Roles and permissions"): openid-client asks for `resource` + permissions, jose
 * verifies the RFC 9068 JWT against the JWKS, and `scope` holds only what the roles grant.
 */

const suite = useTestServerAtPublicUrl();

const INVOICES = 'https://api.example.com/invoices';

async function ok(res: Promise<{ status: number; body: Record<string, any> }>): Promise<Record<string, any>> {
  const answer = await res;
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

/** A tenant with the Invoices API (read, write, approve) and the roles Reader (read) and Writer (write). */
async function setUp(): Promise<{ tenant: TestTenant; reader: string; writer: string }> {
  const tenant = await createTenant(suite.api);
  const auth = { token: tenant.accessToken };
  await ok(suite.api.post(`/v1/${tenant.slug}/api-resources`, {
    name: 'Invoices', identifier: INVOICES, permissions: [{ name: 'read:invoices' }, { name: 'write:invoices' }, { name: 'approve:invoices' }],
  }, auth));
  const reader = (await ok(suite.api.post(`/v1/${tenant.slug}/roles`, { name: 'Reader', permissions: [{ resource: INVOICES, permission: 'read:invoices' }] }, auth))).role.id as string;
  const writer = (await ok(suite.api.post(`/v1/${tenant.slug}/roles`, { name: 'Writer', permissions: [{ resource: INVOICES, permission: 'write:invoices' }] }, auth))).role.id as string;
  return { tenant, reader, writer };
}

async function signIn(rp: RelyingParty, session: HostedSessionTokens, params: Record<string, string>) {
  const result = await signInThroughProvider(rp, new CookieBrowser(), session, params);
  return oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
}

async function verifiedAccessToken(rp: RelyingParty, token: string, audience = INVOICES) {
  const jwks = createRemoteJWKSet(new URL(`${rp.issuer}/jwks`));
  return (await jwtVerify(token, jwks, { issuer: rp.issuer, audience, typ: 'at+jwt' })).payload;
}

const scopesOf = (payload: Record<string, unknown>): string[] => (typeof payload.scope === 'string' && payload.scope ? payload.scope.split(' ').sort() : []);

describe('authorization code', () => {
  it('carries the permissions asked for that the user\'s roles grant, drops the rest, and a role change applies to the next token', async () => {
    const { tenant, reader, writer } = await setUp();
    const member = await signupMember(suite.api, tenant.slug);
    await ok(suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [reader] }, { token: tenant.accessToken }));
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');

    const tokens = await signIn(rp, member, { resource: INVOICES, scope: 'openid offline_access roles read:invoices write:invoices' });
    const payload = await verifiedAccessToken(rp, tokens.access_token);
    expect(payload).toMatchObject({ sub: member.id, client_id: rp.clientId, aud: INVOICES });
    expect(scopesOf(payload)).toEqual(['read:invoices']);
    // the ID token names the roles (scope `roles`)
    expect(decodeJwt(tokens.id_token!).roles).toEqual(['Reader']);

    // Writer added: the next token (a refresh) carries write:invoices; approve:invoices was never asked for
    await ok(suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [reader, writer] }, { token: tenant.accessToken }));
    const refreshed = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token!);
    expect(scopesOf(await verifiedAccessToken(rp, refreshed.access_token))).toEqual(['read:invoices', 'write:invoices']);
    // the token issued before the change is unchanged (it lives until it expires)
    expect(scopesOf(decodeJwt(tokens.access_token))).toEqual(['read:invoices']);

    // all roles removed: the next token carries no permission, without an error
    await ok(suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [] }, { token: tenant.accessToken }));
    const bare = await oidc.refreshTokenGrant(rp.config, refreshed.refresh_token!);
    expect(scopesOf(await verifiedAccessToken(rp, bare.access_token))).toEqual([]);

    // a role that gains a permission: a new sign-in gets it
    await ok(suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [reader] }, { token: tenant.accessToken }));
    await ok(suite.api.patch(`/v1/${tenant.slug}/roles/${reader}`, { permissions: [{ resource: INVOICES, permission: 'read:invoices' }, { resource: INVOICES, permission: 'approve:invoices' }] }, { token: tenant.accessToken }));
    const again = await signIn(rp, member, { resource: INVOICES, scope: 'openid read:invoices approve:invoices write:invoices' });
    expect(scopesOf(await verifiedAccessToken(rp, again.access_token))).toEqual(['approve:invoices', 'read:invoices']);
  });

  it('puts the roles in userinfo with scope `roles`, and not without it', async () => {
    const { tenant, reader, writer } = await setUp();
    const member = await signupMember(suite.api, tenant.slug);
    await ok(suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [writer, reader] }, { token: tenant.accessToken }));
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const withRoles = await signIn(rp, member, { scope: 'openid email roles' });
    expect(await oidc.fetchUserInfo(rp.config, withRoles.access_token, member.id)).toMatchObject({ sub: member.id, roles: ['Reader', 'Writer'] });
    expect(decodeJwt(withRoles.id_token!).roles).toEqual(['Reader', 'Writer']);
    const without = await signIn(rp, member, { scope: 'openid email' });
    expect((await oidc.fetchUserInfo(rp.config, without.access_token, member.id)).roles).toBeUndefined();
    expect(decodeJwt(without.id_token!).roles).toBeUndefined();
  });

  it('refuses a resource the workspace has not registered (also one of its applications\' origins)', async () => {
    const { tenant } = await setUp();
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const url = oidc.buildAuthorizationUrl(rp.config, { redirect_uri: rp.redirectUri, scope: 'openid', resource: 'https://app.example.com/api', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const res = await new CookieBrowser().request(url.href);
    const location = new URL(res.headers.get('location') ?? '', url);
    expect(location.searchParams.get('error')).toBe('invalid_target');
  });
});

describe('client_credentials', () => {
  it('gives an m2m application the permissions its roles grant; a role change applies to the next token; an unknown resource is invalid_target', async () => {
    const { tenant, writer } = await setUp();
    const m2m = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    const application = (await ok(suite.api.get(`/v1/${tenant.slug}/applications`, { token: tenant.accessToken }))).items.find((a: { clientId: string }) => a.clientId === m2m.clientId);

    const none = await oidc.clientCredentialsGrant(m2m.config, { resource: INVOICES, scope: 'read:invoices write:invoices' });
    expect(scopesOf(await verifiedAccessToken(m2m, none.access_token))).toEqual([]);

    await ok(suite.api.put(`/v1/${tenant.slug}/applications/${application.id}/roles`, { roleIds: [writer] }, { token: tenant.accessToken }));
    const granted = await oidc.clientCredentialsGrant(m2m.config, { resource: INVOICES, scope: 'read:invoices write:invoices' });
    const payload = await verifiedAccessToken(m2m, granted.access_token);
    expect(payload).toMatchObject({ client_id: m2m.clientId, aud: INVOICES });
    expect(scopesOf(payload)).toEqual(['write:invoices']);

    await ok(suite.api.patch(`/v1/${tenant.slug}/roles/${writer}`, { permissions: [{ resource: INVOICES, permission: 'write:invoices' }, { resource: INVOICES, permission: 'read:invoices' }] }, { token: tenant.accessToken }));
    const widened = await oidc.clientCredentialsGrant(m2m.config, { resource: INVOICES, scope: 'read:invoices write:invoices approve:invoices' });
    expect(scopesOf(await verifiedAccessToken(m2m, widened.access_token))).toEqual(['read:invoices', 'write:invoices']);

    await expect(oidc.clientCredentialsGrant(m2m.config, { resource: 'https://api.example.com/other', scope: 'read:invoices' })).rejects.toMatchObject({ error: 'invalid_target' });
    // another workspace's resource is not this one's
    const foreign = await registerRelyingParty(suite.api, (await createTenant(suite.api)), suite.publicUrl, 'm2m');
    await expect(oidc.clientCredentialsGrant(foreign.config, { resource: INVOICES, scope: 'read:invoices' })).rejects.toMatchObject({ error: 'invalid_target' });
  });
});

describe('what a token may carry (one statement per token)', () => {
  it('answers the resource and the permissions asked for that the holder\'s roles grant, each once, scoped by tenant', async () => {
    const { tenant, reader } = await setUp();
    const auth = { token: tenant.accessToken };
    const both = (await ok(suite.api.post(`/v1/${tenant.slug}/roles`, {
      name: 'Both', permissions: [{ resource: INVOICES, permission: 'read:invoices' }, { resource: INVOICES, permission: 'write:invoices' }],
    }, auth))).role.id as string;
    const app = (await ok(suite.api.post(`/v1/${tenant.slug}/applications`, { name: 'Backend', type: 'm2m' }, auth))).application as { id: string; clientId: string };
    await ok(suite.api.put(`/v1/${tenant.slug}/applications/${app.id}/roles`, { roleIds: [reader, both] }, auth));
    const member = await signupMember(suite.api, tenant.slug);
    await ok(suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [reader] }, auth));
    const resource = (await ok(suite.api.get(`/v1/${tenant.slug}/api-resources`, auth))).items[0] as { id: string };

    // another workspace with the same API, whose application and user hold every permission there
    const other = await setUp();
    const otherApp = (await ok(suite.api.post(`/v1/${other.tenant.slug}/applications`, { name: 'Other', type: 'm2m' }, { token: other.tenant.accessToken }))).application as { id: string; clientId: string };
    await ok(suite.api.put(`/v1/${other.tenant.slug}/applications/${otherApp.id}/roles`, { roleIds: [other.reader, other.writer] }, { token: other.tenant.accessToken }));
    const otherMember = await signupMember(suite.api, other.tenant.slug);
    await ok(suite.api.put(`/v1/${other.tenant.slug}/users/${otherMember.id}/roles`, { roleIds: [other.reader, other.writer] }, { token: other.tenant.accessToken }));

    const em = suite.server.services.orm.em.fork() as EntityManager;
    const grants = suite.server.services.roleAssignments;
    const sorted = (found: { permissions: string[] } | undefined) => found && { ...found, permissions: [...found.permissions].sort() };
    // read:invoices is held through two roles and appears once; approve:invoices is asked for, not granted; openid is no permission
    expect(sorted(await grants.grantFor(em, tenant.id, INVOICES, { clientId: app.clientId }, ['openid', 'approve:invoices', 'write:invoices', 'read:invoices'])))
      .toEqual({ id: resource.id, identifier: INVOICES, permissions: ['read:invoices', 'write:invoices'] });
    expect(sorted(await grants.grantFor(em, tenant.id, INVOICES, { clientId: app.clientId }, ['write:invoices'])))
      .toEqual({ id: resource.id, identifier: INVOICES, permissions: ['write:invoices'] });
    expect(await grants.grantFor(em, tenant.id, INVOICES, { clientId: app.clientId }, [])).toEqual({ id: resource.id, identifier: INVOICES, permissions: [] });
    expect(sorted(await grants.grantFor(em, tenant.id, INVOICES, { clientId: app.clientId }))?.permissions).toEqual(['read:invoices', 'write:invoices']);
    expect(await grants.grantFor(em, tenant.id, INVOICES, { userId: member.id })).toEqual({ id: resource.id, identifier: INVOICES, permissions: ['read:invoices'] });
    // the other workspace's application and user hold nothing here, and its resource is not this one
    expect((await grants.grantFor(em, tenant.id, INVOICES, { clientId: otherApp.clientId }, ['read:invoices', 'write:invoices']))?.permissions).toEqual([]);
    expect((await grants.grantFor(em, tenant.id, INVOICES, { userId: otherMember.id }))?.permissions).toEqual([]);
    expect((await grants.grantFor(em, other.tenant.id, INVOICES, { clientId: otherApp.clientId }, ['read:invoices']))?.id).not.toBe(resource.id);
    // an unknown client holds nothing; an unregistered resource (or a path under a registered one) is none
    expect((await grants.grantFor(em, tenant.id, INVOICES, { clientId: 'unknown' }, ['read:invoices']))?.permissions).toEqual([]);
    expect(await grants.grantFor(em, tenant.id, `${INVOICES}/2024`, { clientId: app.clientId }, ['read:invoices'])).toBeUndefined();
    expect(await grants.grantFor(em, tenant.id, 'urn:example:api', { userId: member.id })).toBeUndefined();
  });
});

describe('applications registered before API resources existed', () => {
  it('the migration registers each redirect-URI origin as an API resource, and any URL of that origin still names it', async () => {
    const { tenant, reader } = await setUp();
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web', { redirectUris: ['https://app.example.com/callback', 'https://APP.example.com/other', 'http://127.0.0.1:9/cb'] });
    const em = suite.server.services.orm.em.fork() as EntityManager;

    // the migration's data statement, run again inside a transaction that is rolled back
    const migration = new Migration20261126120000_access_control(suite.server.services.orm.em.getDriver(), suite.server.services.orm.config);
    await migration.up();
    const backfill = migration.getQueries().map((q) => (typeof q === 'string' ? q : q.toString())).find((q) => q.startsWith('insert into api_resource'))!;
    expect(backfill).toBeTruthy();
    let registered: { identifier: string; legacy_origin: boolean }[] = [];
    await em.transactional(async (tx) => {
      await tx.execute(backfill);
      registered = (await tx.execute('select identifier, legacy_origin from api_resource where tenant_id = ? order by identifier', [tenant.id])) as typeof registered;
      throw new Error('rollback');
    }).catch((err: Error) => expect(err.message).toBe('rollback'));
    expect(registered).toEqual([{ identifier: 'http://127.0.0.1:9', legacy_origin: true }, { identifier: INVOICES, legacy_origin: false }, { identifier: 'https://app.example.com', legacy_origin: true }]);

    // as migrated: a legacy resource answers any resource URL of its origin, with aud = that URL
    await em.execute(
      `insert into api_resource (id, tenant_id, name, identifier, legacy_origin, created_at, updated_at) values (gen_random_uuid(), ?, 'app', 'https://app.example.com', true, now(), now())`,
      [tenant.id],
    );
    const list = await ok(suite.api.get(`/v1/${tenant.slug}/api-resources`, { token: tenant.accessToken }));
    expect(list.items.map((r: { identifier: string }) => r.identifier)).toEqual([INVOICES, 'https://app.example.com']);
    await ok(suite.api.patch(`/v1/${tenant.slug}/api-resources/${list.items[1].id}`, { permissions: [{ name: 'api' }] }, { token: tenant.accessToken }));
    await ok(suite.api.patch(`/v1/${tenant.slug}/roles/${reader}`, { permissions: [{ resource: 'https://app.example.com', permission: 'api' }] }, { token: tenant.accessToken }));
    await ok(suite.api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [reader] }, { token: tenant.accessToken }));
    const tokens = await signIn(rp, member, { resource: 'https://app.example.com/api', scope: 'openid api' });
    const payload = await verifiedAccessToken(rp, tokens.access_token, 'https://app.example.com/api');
    expect(scopesOf(payload)).toEqual(['api']);
    // a new resource (not migrated) matches its identifier exactly, not its origin
    const m2m = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'm2m');
    await expect(oidc.clientCredentialsGrant(m2m.config, { resource: `${INVOICES}/2024` })).rejects.toMatchObject({ error: 'invalid_target' });
  });
});
