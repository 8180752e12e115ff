import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import { consumePayload, findPayload, upsertPayload } from '../../src/queries/oidc-payload.js';
import { softDeleteUser, updateRoleAndStatus } from '../../src/queries/user.js';
import { OidcStorageAdapter, oidcStorageAdapterFactory, type OidcPayload } from '../../src/services/oidc/oidc-storage-adapter.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the storage adapter of each tenant's OpenID Provider (oidc-provider's `adapter`
 * option, src/services/oidc/oidc-storage-adapter.ts over src/queries/oidc-payload.ts), built alone
 * for a tenant as the provider builds it: upsert, find, findByUid, findByUserCode, consume, destroy,
 * revokeByGrantId, expiry, tokens of a user no longer live, the `Client` model read from the
 * applications, and tenant isolation (a payload of tenant A is never reached through tenant B's
 * adapter). The last cases check that the tenant's built provider stores its models through it.
 */

const suite = useServices();

type Model = 'AccessToken' | 'RefreshToken' | 'AuthorizationCode' | 'Grant' | 'Session' | 'Interaction' | 'DeviceCode' | 'Client';

/** The adapter of `model` for the tenant, built directly from its explicit scope. */
function adapterOf(tenant: Pick<Tenant, 'id'>, model: Model): OidcStorageAdapter {
  const { applications } = suite.services;
  return new OidcStorageAdapter({ tenantId: tenant.id, em: suite.em, clientMetadata: (em, tenantId, clientId) => applications.clientMetadata(em, tenantId, clientId) }, model);
}

const token = (fields: OidcPayload = {}): OidcPayload => ({ jti: randomUUID(), kind: 'AccessToken', clientId: 'app', scope: 'openid', ...fields });

afterEach(() => {
  vi.useRealTimers();
});

describe('the OpenID Provider storage adapter', () => {
  it('stores, replaces and finds a payload by id, by uid (sessions) and by user code (device flow)', async () => {
    const { tenant, admin } = await suite.createTenant();
    const tokens = adapterOf(tenant, 'AccessToken');
    const id = randomUUID();
    await tokens.upsert(id, token({ accountId: admin.id, grantId: 'g1' }), 3600);
    expect(await tokens.find(id)).toMatchObject({ accountId: admin.id, grantId: 'g1', scope: 'openid' });
    await tokens.upsert(id, token({ accountId: admin.id, grantId: 'g1', scope: 'openid email' }), 3600);
    expect(await tokens.find(id)).toMatchObject({ scope: 'openid email' });
    expect(await tokens.find(randomUUID())).toBeUndefined();

    const sessions = adapterOf(tenant, 'Session');
    const uid = randomUUID();
    await sessions.upsert('session-1', { jti: 'session-1', uid, accountId: admin.id, kind: 'Session' }, 600);
    expect(await sessions.findByUid(uid)).toMatchObject({ jti: 'session-1', accountId: admin.id });
    expect(await sessions.findByUid(randomUUID())).toBeUndefined();

    const devices = adapterOf(tenant, 'DeviceCode');
    const userCode = `UC-${randomUUID().slice(0, 8)}`;
    await devices.upsert('device-1', { jti: 'device-1', kind: 'DeviceCode', userCode, clientId: 'tv' }, 600);
    expect(await devices.findByUserCode(userCode)).toMatchObject({ jti: 'device-1', clientId: 'tv' });
    expect(await devices.findByUserCode('UC-none')).toBeUndefined();
  });

  it('keeps the models apart: an id stored as one model is not found as another', async () => {
    const { tenant, admin } = await suite.createTenant();
    const id = randomUUID();
    await adapterOf(tenant, 'AccessToken').upsert(id, token({ accountId: admin.id }), 3600);
    expect(await adapterOf(tenant, 'RefreshToken').find(id)).toBeUndefined();
    expect(await adapterOf(tenant, 'AccessToken').find(id)).toBeDefined();
  });

  it('marks a consumed payload with the time it was consumed, and destroys it', async () => {
    const { tenant, admin } = await suite.createTenant();
    const codes = adapterOf(tenant, 'AuthorizationCode');
    const id = randomUUID();
    await codes.upsert(id, { jti: id, kind: 'AuthorizationCode', accountId: admin.id, grantId: 'g' }, 60);
    expect((await codes.find(id))?.consumed).toBeUndefined();
    const before = Math.floor(Date.now() / 1000) - 1;
    await codes.consume(id);
    const consumed = (await codes.find(id))?.consumed;
    expect(typeof consumed).toBe('number');
    expect(consumed).toBeGreaterThanOrEqual(before);
    await codes.destroy(id);
    expect(await codes.find(id)).toBeUndefined();
  });

  it('revokes every code and token of one grant, and nothing of another grant', async () => {
    const { tenant, admin } = await suite.createTenant();
    const access = adapterOf(tenant, 'AccessToken');
    const refresh = adapterOf(tenant, 'RefreshToken');
    const [a1, r1, a2] = [randomUUID(), randomUUID(), randomUUID()];
    await access.upsert(a1, token({ accountId: admin.id, grantId: 'grant-a' }), 3600);
    await refresh.upsert(r1, token({ kind: 'RefreshToken', accountId: admin.id, grantId: 'grant-a' }), 3600);
    await access.upsert(a2, token({ accountId: admin.id, grantId: 'grant-b' }), 3600);
    await access.revokeByGrantId('grant-a');
    expect(await access.find(a1)).toBeUndefined();
    expect(await refresh.find(r1)).toBeUndefined();
    expect(await access.find(a2)).toMatchObject({ grantId: 'grant-b' });
  });

  it('reads an expired payload as absent; without expiresIn it does not expire', async () => {
    const { tenant, admin } = await suite.createTenant();
    const access = adapterOf(tenant, 'AccessToken');
    const [short, forever] = [randomUUID(), randomUUID()];
    // only Date is faked: the adapter's clock, not the database's or the driver's timers
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    await access.upsert(short, token({ accountId: admin.id }), 60);
    await access.upsert(forever, token({ accountId: admin.id }));
    expect(await access.find(short)).toBeDefined();
    vi.setSystemTime(Date.now() + 61_000);
    expect(await access.find(short)).toBeUndefined();
    expect(await access.find(forever)).toBeDefined();
  });

  it('reads the tokens of a user no longer live as absent, but not their interactions', async () => {
    const { tenant } = await suite.createTenant();
    const suspended = await suite.addUser(tenant);
    const deleted = await suite.addUser(tenant);
    const access = adapterOf(tenant, 'AccessToken');
    const interactions = adapterOf(tenant, 'Interaction');
    const [s, d, i] = [randomUUID(), randomUUID(), randomUUID()];
    await access.upsert(s, token({ accountId: suspended.id }), 3600);
    await access.upsert(d, token({ accountId: deleted.id }), 3600);
    await interactions.upsert(i, { jti: i, kind: 'Interaction', accountId: suspended.id }, 600);
    // the rows stay (changed through the user query module, not the services that also delete them)
    await updateRoleAndStatus(suite.em(), tenant.id, suspended.id, 'Member', 'Suspended', new Date());
    await softDeleteUser(suite.em(), tenant.id, deleted.id, new Date());
    expect(await access.find(s)).toBeUndefined();
    expect(await access.find(d)).toBeUndefined();
    expect(await interactions.find(i)).toMatchObject({ accountId: suspended.id });
    // reactivated, the same row reads again
    await updateRoleAndStatus(suite.em(), tenant.id, suspended.id, 'Member', 'Active', new Date());
    expect(await access.find(s)).toMatchObject({ accountId: suspended.id });
  });

  it('loses every payload of a user the service suspends (docs/oidc.md "Sessions end everywhere")', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const access = adapterOf(tenant, 'AccessToken');
    const interactions = adapterOf(tenant, 'Interaction');
    const [a, i] = [randomUUID(), randomUUID()];
    await access.upsert(a, token({ accountId: user.id }), 3600);
    await interactions.upsert(i, { jti: i, kind: 'Interaction', accountId: user.id }, 600);
    await suite.services.userAdministration.change(suite.scope(tenant, actor), user.id, { status: 'Suspended' });
    await suite.services.userAdministration.change(suite.scope(tenant, actor), user.id, { status: 'Active' });
    expect(await access.find(a)).toBeUndefined();
    expect(await interactions.find(i)).toBeUndefined();
  });

  it('reads the Client model from the tenant\'s applications: its client metadata, unknown in another tenant', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    const { application } = await suite.services.applications.create(
      suite.scope(first.tenant, first.actor), { name: 'Web app', type: 'web', redirectUris: ['https://app.example/cb'] },
    );
    expect(await adapterOf(first.tenant, 'Client').find(application.clientId)).toMatchObject({
      client_id: application.clientId, client_name: 'Web app', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(await adapterOf(second.tenant, 'Client').find(application.clientId)).toBeUndefined();
    expect(await adapterOf(first.tenant, 'Client').find(`app_${randomUUID()}`)).toBeUndefined();
  });

  describe('tenant isolation: a payload of tenant A is never reached through tenant B\'s adapter', () => {
    it('find, findByUid and findByUserCode of B do not see A\'s rows; the same id in both is two rows', async () => {
      const a = await suite.createTenant();
      const b = await suite.createTenant();
      const id = randomUUID();
      const uid = randomUUID();
      const userCode = `UC-${randomUUID().slice(0, 8)}`;
      await adapterOf(a.tenant, 'AccessToken').upsert(id, token({ accountId: a.admin.id, grantId: 'shared-grant' }), 3600);
      await adapterOf(a.tenant, 'Session').upsert('s-1', { jti: 's-1', uid, accountId: a.admin.id, kind: 'Session' }, 600);
      await adapterOf(a.tenant, 'DeviceCode').upsert('d-1', { jti: 'd-1', kind: 'DeviceCode', userCode }, 600);
      expect(await adapterOf(b.tenant, 'AccessToken').find(id)).toBeUndefined();
      expect(await adapterOf(b.tenant, 'Session').findByUid(uid)).toBeUndefined();
      expect(await adapterOf(b.tenant, 'DeviceCode').findByUserCode(userCode)).toBeUndefined();

      await adapterOf(b.tenant, 'AccessToken').upsert(id, token({ accountId: b.admin.id, grantId: 'shared-grant' }), 3600);
      expect(await adapterOf(a.tenant, 'AccessToken').find(id)).toMatchObject({ accountId: a.admin.id });
      expect(await adapterOf(b.tenant, 'AccessToken').find(id)).toMatchObject({ accountId: b.admin.id });
    });

    it('consume, destroy and revokeByGrantId of B leave A\'s row alone', async () => {
      const a = await suite.createTenant();
      const b = await suite.createTenant();
      const one = adapterOf(a.tenant, 'AccessToken');
      const two = adapterOf(b.tenant, 'AccessToken');
      const [id, other] = [randomUUID(), randomUUID()];
      await one.upsert(id, token({ accountId: a.admin.id, grantId: 'shared-grant' }), 3600);
      await one.upsert(other, token({ accountId: a.admin.id, grantId: 'shared-grant' }), 3600);
      await two.upsert(id, token({ accountId: b.admin.id, grantId: 'shared-grant' }), 3600);

      await two.consume(id);
      expect((await one.find(id))?.consumed).toBeUndefined();
      expect((await two.find(id))?.consumed).toEqual(expect.any(Number));
      await two.destroy(id);
      expect(await one.find(id)).toBeDefined();
      expect(await two.find(id)).toBeUndefined();
      // B's revocation of a grant id A also uses (grant ids are A's and B's own) removes nothing of A's
      await two.revokeByGrantId('shared-grant');
      expect(await one.find(id)).toBeDefined();
      expect(await one.find(other)).toBeDefined();
      await one.revokeByGrantId('shared-grant');
      expect(await one.find(id)).toBeUndefined();
      expect(await one.find(other)).toBeUndefined();
    });
  });

  it('the factory (oidc-provider\'s `adapter` option) builds one adapter per model for its tenant', async () => {
    const { tenant, admin } = await suite.createTenant();
    const factory = oidcStorageAdapterFactory({ tenantId: tenant.id, em: suite.em, clientMetadata: async () => undefined });
    const grants = factory('Grant');
    expect(grants).toBeInstanceOf(OidcStorageAdapter);
    expect(grants.model).toBe('Grant');
    const id = randomUUID();
    await grants.upsert(id, { jti: id, kind: 'Grant', accountId: admin.id, clientId: 'app' }, 60);
    expect(await findPayload(suite.em(), tenant.id, 'Grant', id)).toMatchObject({ accountId: admin.id });
    expect(await factory('Session').find(id)).toBeUndefined();
  });

  it('is what the tenant\'s built provider reads and writes (Grant.find after Grant.save)', async () => {
    const { tenant, admin } = await suite.createTenant();
    const provider = await suite.services.oidc.providerFor(tenant);
    const grant = new provider.Grant({ accountId: admin.id, clientId: 'some-app' });
    grant.addOIDCScope('openid email');
    const id = await grant.save();
    expect(await adapterOf(tenant, 'Grant').find(id)).toMatchObject({ accountId: admin.id, clientId: 'some-app' });
    await consumePayload(suite.em(), tenant.id, 'Grant', id);
    await upsertPayload(suite.em(), tenant.id, 'Grant', id, { jti: id, kind: 'Grant', accountId: admin.id, clientId: 'other-app', exp: Math.floor(Date.now() / 1000) + 60 }, 60);
    expect(await provider.Grant.find(id)).toMatchObject({ clientId: 'other-app' });
    expect((provider as unknown as Record<'Grant', { adapter: unknown }>).Grant.adapter).toBeInstanceOf(OidcStorageAdapter);
  });
});
