import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createTenant, expectError, signupMember, unique } from '../helpers/api.js';
import { CookieBrowser, registerRelyingParty, signInThroughProvider } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * A person's profile: `name` and `picture` (docs/api-rules.md "Users and sign-up"), edited by the
 * person with PATCH me and by an Admin with PATCH users/{userId}, audited `UserProfileUpdated`,
 * carried by the exports and the import, and the `profile` scope's claims of the OpenID Provider.
 */

const suite = useTestServerAtPublicUrl();

const PICTURE = 'https://images.example.com/avatars/ada.png';

function em(): EntityManager {
  return suite.server.services.orm.em.fork() as EntityManager;
}

async function profileEvents(tenantId: string, userId: string) {
  return em().execute<{ actor_type: string; actor_id: string | null; details: { changed: string[] } }[]>(
    `select actor_type, actor_id, details from audit_event where tenant_id = ? and action = 'UserProfileUpdated' and target_id = ? order by created_at, id`,
    [tenantId, userId],
  );
}

describe('PATCH me: name and picture', () => {
  it('sets, trims, clears and leaves alone; shown on GET me, the list and the user page; audited without the values', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const me = `/v1/${tenant.slug}/me`;
    const before = await suite.api.get(me, { token: member.accessToken });
    expect(before.body).toMatchObject({ name: null, picture: null });

    const set = await suite.api.patch(me, { name: '  Ada Lovelace ', picture: PICTURE }, { token: member.accessToken });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ id: member.id, name: 'Ada Lovelace', picture: PICTURE });
    expect((await suite.api.get(me, { token: member.accessToken })).body).toMatchObject({ name: 'Ada Lovelace', picture: PICTURE });
    const list = await suite.api.get(`/v1/${tenant.slug}/users?search=${encodeURIComponent(member.email)}`, { token: tenant.accessToken });
    expect(list.body.items[0]).toMatchObject({ name: 'Ada Lovelace', picture: PICTURE });
    expect((await suite.api.get(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).body.user).toMatchObject({ name: 'Ada Lovelace' });

    // an absent field stays, null clears; the same values again write nothing
    expect((await suite.api.patch(me, { name: 'Ada' }, { token: member.accessToken })).body).toMatchObject({ name: 'Ada', picture: PICTURE });
    expect((await suite.api.patch(me, { name: 'Ada' }, { token: member.accessToken })).status).toBe(200);
    expect((await suite.api.patch(me, { picture: null }, { token: member.accessToken })).body).toMatchObject({ name: 'Ada', picture: null });

    const events = await profileEvents(tenant.id, member.id);
    expect(events).toEqual([
      { actor_type: 'user', actor_id: member.id, details: { changed: ['name', 'picture'] } },
      { actor_type: 'user', actor_id: member.id, details: { changed: ['name'] } },
      { actor_type: 'user', actor_id: member.id, details: { changed: ['picture'] } },
    ]);
    expect(JSON.stringify(events)).not.toContain('Ada');
  });

  it('refuses http:, javascript:, data:, an IP address, credentials in the URL, too long or blank values', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const me = `/v1/${tenant.slug}/me`;
    const bad: Record<string, unknown>[] = [
      { picture: 'http://images.example.com/a.png' },
      { picture: 'javascript:alert(1)' },
      { picture: 'data:image/png;base64,iVBORw0KGgo=' },
      { picture: 'https://127.0.0.1/a.png' },
      { picture: 'https://user:secret@images.example.com/a.png' },
      { picture: `https://images.example.com/${'a'.repeat(2049 - 'https://images.example.com/'.length)}` },
      { picture: 'not a url' },
      { name: 'x'.repeat(129) },
      { name: '   ' },
      { name: '' },
      { name: 'Ada\nLovelace' },
      { name: 42 },
    ];
    for (const body of bad) {
      expectError(await suite.api.patch(me, body, { token: member.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    }
    // the limits themselves pass
    const longest = `https://images.example.com/${'a'.repeat(2048 - 'https://images.example.com/'.length)}`;
    const ok = await suite.api.patch(me, { name: 'x'.repeat(128), picture: longest }, { token: member.accessToken });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ name: 'x'.repeat(128), picture: longest });
    // an API key is no person: 401 user_token_required
    const key = (await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'k', environment: 'live' }, { token: tenant.accessToken })).body.plaintext as string;
    expectError(await suite.api.patch(me, { name: 'Key' }, { token: key }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await suite.api.patch(me, { name: 'Nobody' }), 401, 'UNAUTHORIZED');
  });
});

describe('PATCH users/{userId}: name and picture by an Admin', () => {
  it('sets and clears them with the Admin as actor; the same rules; Members, test keys and other workspaces are refused', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const path = `/v1/${tenant.slug}/users/${member.id}`;
    const set = await suite.api.patch(path, { name: 'Grace Hopper', picture: PICTURE }, { token: tenant.accessToken });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ id: member.id, name: 'Grace Hopper', picture: PICTURE, role: 'Member' });
    expect((await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).body).toMatchObject({ name: 'Grace Hopper', picture: PICTURE });
    // together with a role change: both apply, each audited
    const both = await suite.api.patch(path, { role: 'Admin', name: null }, { token: tenant.accessToken });
    expect(both.body).toMatchObject({ role: 'Admin', name: null, picture: PICTURE });
    expect(await profileEvents(tenant.id, member.id)).toEqual([
      { actor_type: 'user', actor_id: tenant.adminId, details: { changed: ['name', 'picture'] } },
      { actor_type: 'user', actor_id: tenant.adminId, details: { changed: ['name'] } },
    ]);

    for (const body of [{ picture: 'http://images.example.com/a.png' }, { picture: 'data:image/gif;base64,R0lGOD' }, { name: 'y'.repeat(129) }]) {
      expectError(await suite.api.patch(path, body, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    }

    // a Member may not edit another person; a test key may not (PATCH users/{userId} is a security change)
    const plain = await signupMember(suite.api, tenant.slug);
    expectError(await suite.api.patch(`/v1/${tenant.slug}/users/${tenant.adminId}`, { name: 'Not mine' }, { token: plain.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    const key = async (environment: string) =>
      (await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: environment, environment }, { token: tenant.accessToken })).body.plaintext as string;
    expectError(await suite.api.patch(path, { name: 'From a test key' }, { token: await key('test') }), 403, 'FORBIDDEN', 'live_key_required');
    expect((await suite.api.patch(path, { name: 'From a live key' }, { token: await key('live') })).body.name).toBe('From a live key');
    // another workspace's Admin: not found, and nothing changed
    const otherTenant = await createTenant(suite.api);
    expectError(await suite.api.patch(`/v1/${otherTenant.slug}/users/${member.id}`, { name: 'Intruder' }, { token: otherTenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.patch(path, { name: 'Intruder' }, { token: otherTenant.accessToken }), 401, 'UNAUTHORIZED');
    expect((await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).body.name).toBe('From a live key');
  });
});

describe('exports and import carry the profile', () => {
  it('is in the GDPR export, the NDJSON export, and an import takes it (refusing a bad one for that user)', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    await suite.api.patch(`/v1/${tenant.slug}/me`, { name: 'Ada', picture: PICTURE }, { token: member.accessToken });
    const gdpr = await suite.api.get(`/v1/${tenant.slug}/me/export`, { token: member.accessToken });
    expect(gdpr.body.user).toMatchObject({ name: 'Ada', picture: PICTURE });

    const res = await fetch(`${suite.server.url}/v1/${tenant.slug}/users/export`, { headers: { authorization: `Bearer ${tenant.accessToken}` } });
    const lines = (await res.text()).trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((l) => l.id === member.id)).toMatchObject({ name: 'Ada', picture: PICTURE });
    expect(lines.find((l) => l.id === tenant.adminId)).toMatchObject({ name: null, picture: null });

    const second = await createTenant(suite.api);
    const bad = [
      { email: `n-${unique()}@example.com`, name: 'z'.repeat(129) },
      { email: `p-${unique()}@example.com`, picture: 'http://images.example.com/a.png' },
      { email: `q-${unique()}@example.com`, picture: 'data:image/png;base64,AAAA' },
    ];
    const imported = await suite.api.post(`/v1/${second.slug}/users/import`, { users: [...lines, ...bad] }, { token: second.accessToken });
    expect(imported.body).toEqual({
      created: 2, skipped: 0,
      errors: [{ index: 2, reason: 'invalid_name' }, { index: 3, reason: 'invalid_picture' }, { index: 4, reason: 'invalid_picture' }],
    });
    const copied = (await suite.api.get(`/v1/${second.slug}/users?search=${encodeURIComponent(member.email)}`, { token: second.accessToken })).body.items[0];
    expect(copied).toMatchObject({ email: member.email, name: 'Ada', picture: PICTURE });
  });
});

describe('the OpenID Provider: scope profile', () => {
  it('adds name and picture to the ID token and userinfo; left out when unset or without the scope', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const signIn = async (scope: string) => {
      const result = await signInThroughProvider(rp, new CookieBrowser(), member, { scope });
      return oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
    };
    const discovery = (await (await fetch(`${rp.issuer}/.well-known/openid-configuration`)).json()) as { scopes_supported: string[]; claims_supported: string[] };
    expect(discovery.scopes_supported).toContain('profile');
    expect(discovery.claims_supported).toEqual(expect.arrayContaining(['name', 'picture']));

    // not set yet: the claims are left out, not null
    const unset = await signIn('openid profile');
    expect(decodeJwt(unset.id_token!)).not.toHaveProperty('name');
    expect(await oidc.fetchUserInfo(rp.config, unset.access_token, member.id)).not.toHaveProperty('picture');

    await suite.api.patch(`/v1/${tenant.slug}/me`, { name: 'Ada Lovelace', picture: PICTURE }, { token: member.accessToken });
    const withProfile = await signIn('openid email profile');
    expect(decodeJwt(withProfile.id_token!)).toMatchObject({ sub: member.id, name: 'Ada Lovelace', picture: PICTURE, email: member.email });
    expect(await oidc.fetchUserInfo(rp.config, withProfile.access_token, member.id)).toMatchObject({ name: 'Ada Lovelace', picture: PICTURE });
    const without = await signIn('openid email');
    expect(decodeJwt(without.id_token!).name).toBeUndefined();
    expect((await oidc.fetchUserInfo(rp.config, without.access_token, member.id)).picture).toBeUndefined();
  });
});
