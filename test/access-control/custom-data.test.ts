import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createTenant, expectError, signupMember } from '../helpers/api.js';
import { CookieBrowser, registerRelyingParty, signInThroughProvider } from '../helpers/oidc-relying-party.js';
import { useTestServerAtPublicUrl } from '../helpers/suite.js';

/**
 * A user's custom data (CONTRACT "Roles and permissions", custom data): set by an Admin or a live
 * key with PATCH users/{userId}, shown on the User object, and the `custom_data` claim.
 */

const suite = useTestServerAtPublicUrl();

const DATA = { plan: 'pro', seats: 12, flags: { beta: true }, label: 'Büro' };

describe('custom data', () => {
  it('is set by an Admin, shown on the User object and GET me, audited; at most 4 KiB; an object only', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const path = `/v1/${tenant.slug}/users/${member.id}`;
    const before = await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    expect(before.body.customData).toEqual({});

    const set = await suite.api.patch(path, { customData: DATA }, { token: tenant.accessToken });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.customData).toEqual(DATA);
    expect((await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).body.customData).toEqual(DATA);
    expect((await suite.api.get(path, { token: tenant.accessToken })).body.user.customData).toEqual(DATA);
    // a role change leaves it as it is
    expect((await suite.api.patch(path, { role: 'Admin' }, { token: tenant.accessToken })).body.customData).toEqual(DATA);

    const [audit] = await (suite.server.services.orm.em.fork() as EntityManager).execute(
      `select actor_id, target_id, details from audit_event where tenant_id = ? and action = 'UserCustomDataChanged'`, [tenant.id],
    );
    expect(audit).toMatchObject({ actor_id: tenant.adminId, target_id: member.id, details: { keys: ['plan', 'seats', 'flags', 'label'] } });

    // 4096 bytes of JSON pass, 4097 do not (multi-byte characters count as their UTF-8 bytes)
    const fits = { x: 'a'.repeat(4096 - '{"x":""}'.length) };
    expect((await suite.api.patch(path, { customData: fits }, { token: tenant.accessToken })).status).toBe(200);
    expectError(await suite.api.patch(path, { customData: { x: `${fits.x.slice(1)}é` } }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'custom_data_too_large');
    for (const bad of [[1, 2], 'text', null, 5]) {
      expectError(await suite.api.patch(path, { customData: bad }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    }
    expect((await suite.api.get(path, { token: tenant.accessToken })).body.user.customData).toEqual(fits);
  });

  it('a Member 403, a test key 403 live_key_required, a live key may; another tenant\'s user 404', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const path = `/v1/${tenant.slug}/users/${member.id}`;
    const key = async (environment: string) =>
      (await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: environment, environment }, { token: tenant.accessToken })).body.plaintext as string;
    expectError(await suite.api.patch(path, { customData: DATA }, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expectError(await suite.api.patch(path, { customData: DATA }, { token: await key('test') }), 403, 'FORBIDDEN', 'live_key_required');
    expect((await suite.api.patch(path, { customData: DATA }, { token: await key('live') })).body.customData).toEqual(DATA);
    const other = await createTenant(suite.api);
    expectError(await suite.api.patch(`/v1/${other.slug}/users/${member.id}`, { customData: {} }, { token: other.accessToken }), 404, 'NOT_FOUND');
  });

  it('is the custom_data claim of the ID token and userinfo with scope custom_data, and absent without it', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    expect((await suite.api.patch(`/v1/${tenant.slug}/users/${member.id}`, { customData: DATA }, { token: tenant.accessToken })).status).toBe(200);
    const rp = await registerRelyingParty(suite.api, tenant, suite.publicUrl, 'web');
    const signIn = async (scope: string) => {
      const result = await signInThroughProvider(rp, new CookieBrowser(), member, { scope });
      return oidc.authorizationCodeGrant(rp.config, result.callback, { pkceCodeVerifier: result.verifier, expectedState: result.state, expectedNonce: result.nonce });
    };
    const withData = await signIn('openid custom_data');
    expect(decodeJwt(withData.id_token!).custom_data).toEqual(DATA);
    expect((await oidc.fetchUserInfo(rp.config, withData.access_token, member.id)).custom_data).toEqual(DATA);
    const without = await signIn('openid email');
    expect(decodeJwt(without.id_token!).custom_data).toBeUndefined();
    expect((await oidc.fetchUserInfo(rp.config, without.access_token, member.id)).custom_data).toBeUndefined();
  });
});
