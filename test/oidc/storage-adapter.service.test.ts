import { randomUUID } from 'node:crypto';
import type Provider from 'oidc-provider';
import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import { consumePayload, destroyPayload, findPayload, upsertPayload } from '../../src/queries/oidc-payload.js';
import { softDeleteUser, updateRoleAndStatus } from '../../src/queries/user.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the storage adapter of each tenant's OpenID Provider (oidc-provider's `adapter`
 * option, src/services/oidc/oidc-provider-service.ts over src/queries/oidc-payload.ts): upsert, find,
 * findByUid, consume, destroy, revokeByGrantId, expiry, tokens of a user no longer live, and tenant
 * scoping. The adapter class is local to the provider's construction, so it is reached as the
 * library reaches it: through the models of the tenant's built provider (`Model.adapter`).
 */

const suite = useServices();

type Payload = Record<string, unknown>;

/** oidc-provider's adapter contract (one instance per model). */
interface StorageAdapter {
  upsert(id: string, payload: Payload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<Payload | undefined>;
  findByUid(uid: string): Promise<Payload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

type Model = 'AccessToken' | 'RefreshToken' | 'AuthorizationCode' | 'Grant' | 'Session' | 'Interaction';

/** The adapter the tenant's provider stores `model` with. */
async function adapterOf(tenant: Tenant, model: Model): Promise<StorageAdapter> {
  const provider: Provider = await suite.services.oidc.providerFor(tenant);
  return (provider as unknown as Record<Model, { adapter: StorageAdapter }>)[model].adapter;
}

const token = (fields: Payload = {}): Payload => ({ jti: randomUUID(), kind: 'AccessToken', clientId: 'app', scope: 'openid', ...fields });

describe('the OpenID Provider storage adapter', () => {
  it('stores, replaces and finds a payload by id, and by uid for sessions', async () => {
    const { tenant, admin } = await suite.createTenant();
    const tokens = await adapterOf(tenant, 'AccessToken');
    const id = randomUUID();
    await tokens.upsert(id, token({ accountId: admin.id, grantId: 'g1' }), 3600);
    expect(await tokens.find(id)).toMatchObject({ accountId: admin.id, grantId: 'g1', scope: 'openid' });
    await tokens.upsert(id, token({ accountId: admin.id, grantId: 'g1', scope: 'openid email' }), 3600);
    expect(await tokens.find(id)).toMatchObject({ scope: 'openid email' });
    expect(await tokens.find(randomUUID())).toBeUndefined();

    const sessions = await adapterOf(tenant, 'Session');
    const uid = randomUUID();
    await sessions.upsert('session-1', { jti: 'session-1', uid, accountId: admin.id, kind: 'Session' }, 600);
    expect(await sessions.findByUid(uid)).toMatchObject({ jti: 'session-1', accountId: admin.id });
    expect(await sessions.findByUid(randomUUID())).toBeUndefined();
  });

  it('keeps the models apart: an id stored as one model is not found as another', async () => {
    const { tenant, admin } = await suite.createTenant();
    const id = randomUUID();
    await (await adapterOf(tenant, 'AccessToken')).upsert(id, token({ accountId: admin.id }), 3600);
    expect(await (await adapterOf(tenant, 'RefreshToken')).find(id)).toBeUndefined();
  });

  it('marks a consumed payload with the time it was consumed, and destroys it', async () => {
    const { tenant, admin } = await suite.createTenant();
    const codes = await adapterOf(tenant, 'AuthorizationCode');
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
    const access = await adapterOf(tenant, 'AccessToken');
    const refresh = await adapterOf(tenant, 'RefreshToken');
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
    const access = await adapterOf(tenant, 'AccessToken');
    const [short, forever] = [randomUUID(), randomUUID()];
    await access.upsert(short, token({ accountId: admin.id }), 1);
    await access.upsert(forever, token({ accountId: admin.id }));
    expect(await access.find(short)).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await access.find(short)).toBeUndefined();
    expect(await access.find(forever)).toBeDefined();
  });

  it('reads the tokens of a user no longer live as absent, but not their interactions', async () => {
    const { tenant } = await suite.createTenant();
    const suspended = await suite.addUser(tenant);
    const deleted = await suite.addUser(tenant);
    const access = await adapterOf(tenant, 'AccessToken');
    const interactions = await adapterOf(tenant, 'Interaction');
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
    const access = await adapterOf(tenant, 'AccessToken');
    const interactions = await adapterOf(tenant, 'Interaction');
    const [a, i] = [randomUUID(), randomUUID()];
    await access.upsert(a, token({ accountId: user.id }), 3600);
    await interactions.upsert(i, { jti: i, kind: 'Interaction', accountId: user.id }, 600);
    await suite.services.userAdministration.change(suite.scope(tenant, actor), user.id, { status: 'Suspended' });
    await suite.services.userAdministration.change(suite.scope(tenant, actor), user.id, { status: 'Active' });
    expect(await access.find(a)).toBeUndefined();
    expect(await interactions.find(i)).toBeUndefined();
  });

  it('scopes every operation by tenant: the same id in two workspaces are two rows', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    const one = await adapterOf(first.tenant, 'AccessToken');
    const two = await adapterOf(second.tenant, 'AccessToken');
    const id = randomUUID();
    await one.upsert(id, token({ accountId: first.admin.id, grantId: 'shared-grant' }), 3600);
    expect(await two.find(id)).toBeUndefined();
    await two.upsert(id, token({ accountId: second.admin.id, grantId: 'shared-grant' }), 3600);
    expect(await one.find(id)).toMatchObject({ accountId: first.admin.id });
    expect(await two.find(id)).toMatchObject({ accountId: second.admin.id });

    // the other workspace's consume, destroy and grant revocation leave this one's row alone
    await two.consume(id);
    expect((await one.find(id))?.consumed).toBeUndefined();
    await two.revokeByGrantId('shared-grant');
    expect(await one.find(id)).toBeDefined();
    expect(await two.find(id)).toBeUndefined();
    await destroyPayload(suite.em(), second.tenant.id, 'AccessToken', id);
    expect(await findPayload(suite.em(), first.tenant.id, 'AccessToken', id)).toBeDefined();
  });

  it('is what the provider\'s own models read and write (Grant.find after Grant.save)', async () => {
    const { tenant, admin } = await suite.createTenant();
    const provider = await suite.services.oidc.providerFor(tenant);
    const grant = new provider.Grant({ accountId: admin.id, clientId: 'some-app' });
    grant.addOIDCScope('openid email');
    const id = await grant.save();
    expect(await findPayload(suite.em(), tenant.id, 'Grant', id)).toMatchObject({ accountId: admin.id, clientId: 'some-app' });
    await consumePayload(suite.em(), tenant.id, 'Grant', id);
    await upsertPayload(suite.em(), tenant.id, 'Grant', id, { jti: id, kind: 'Grant', accountId: admin.id, clientId: 'other-app', exp: Math.floor(Date.now() / 1000) + 60 }, 60);
    expect(await provider.Grant.find(id)).toMatchObject({ clientId: 'other-app' });
  });
});
