import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, signupMember, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Who holds a role (docs/authorization.md "Members of a role"): `GET /v1/{slug}/roles/{id}/members`
 * and RoleService.members. Live users and applications, a page at a time, scoped by tenant.
 */

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
});

const INVOICES = 'https://api.example.com/invoices';

async function ok(res: Promise<{ status: number; body: Record<string, any> }>): Promise<Record<string, any>> {
  const answer = await res;
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

/** A tenant with the Invoices API, the roles Reader and Writer, an m2m application and two members. */
async function setUp() {
  const tenant = await createTenant(api);
  const auth = { token: tenant.accessToken };
  await ok(api.post(`/v1/${tenant.slug}/api-resources`, { name: 'Invoices', identifier: INVOICES, permissions: [{ name: 'read:invoices' }, { name: 'write:invoices' }] }, auth));
  const reader = (await ok(api.post(`/v1/${tenant.slug}/roles`, { name: 'Reader', permissions: [{ resource: INVOICES, permission: 'read:invoices' }] }, auth))).role.id as string;
  const writer = (await ok(api.post(`/v1/${tenant.slug}/roles`, { name: 'Writer', permissions: [{ resource: INVOICES, permission: 'write:invoices' }] }, auth))).role.id as string;
  const app = (await ok(api.post(`/v1/${tenant.slug}/applications`, { name: 'Billing backend', type: 'm2m' }, auth))).application as { id: string; clientId: string };
  const alice = await signupMember(api, tenant.slug);
  const bob = await signupMember(api, tenant.slug);
  return { tenant, auth, reader, writer, app, alice, bob };
}

const members = (tenant: TestTenant, roleId: string, query = '', token = tenant.accessToken) => api.get(`/v1/${tenant.slug}/roles/${roleId}/members${query}`, { token });

/** The holders of every page, following `nextCursor` with `limit`. */
async function allPages(tenant: TestTenant, roleId: string, limit: number): Promise<{ pages: number; holders: string[] }> {
  const holders: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const body = await ok(members(tenant, roleId, `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
    pages += 1;
    expect(body.items.length).toBeLessThanOrEqual(limit);
    for (const item of body.items) holders.push(item.type === 'user' ? `user:${item.user.id}` : `application:${item.application.id}`);
    cursor = body.nextCursor as string | null;
  } while (cursor);
  return { pages, holders };
}

describe('GET roles/{id}/members', () => {
  it('lists the users (as the users routes show them) and the applications holding the role; a removed assignment and a deleted user disappear', async () => {
    const { tenant, auth, reader, writer, app, alice, bob } = await setUp();
    expect(await ok(members(tenant, reader))).toEqual({ items: [], nextCursor: null });

    await ok(api.put(`/v1/${tenant.slug}/users/${alice.id}/roles`, { roleIds: [reader, writer] }, auth));
    await ok(api.put(`/v1/${tenant.slug}/applications/${app.id}/roles`, { roleIds: [reader] }, auth));
    await ok(api.put(`/v1/${tenant.slug}/users/${bob.id}/roles`, { roleIds: [reader] }, auth));

    const listed = await ok(members(tenant, reader));
    expect(listed.nextCursor).toBeNull();
    // in the order the holders' roles were set
    expect(listed.items.map((i: { type: string }) => i.type)).toEqual(['user', 'application', 'user']);
    const shownAlice = (await ok(api.get(`/v1/${tenant.slug}/users/${alice.id}`, auth))).user;
    expect(listed.items[0]).toEqual({ type: 'user', user: shownAlice });
    const shownApp = await ok(api.get(`/v1/${tenant.slug}/applications/${app.id}`, auth));
    expect(listed.items[1]).toEqual({ type: 'application', application: shownApp });
    expect(JSON.stringify(listed)).not.toMatch(/secret/i);
    expect(listed.items[2].user.id).toBe(bob.id);
    // the other role is held by Alice alone
    expect((await ok(members(tenant, writer))).items.map((i: { user: { id: string } }) => i.user.id)).toEqual([alice.id]);

    // Alice loses Reader (keeps Writer): gone from Reader's members
    await ok(api.put(`/v1/${tenant.slug}/users/${alice.id}/roles`, { roleIds: [writer] }, auth));
    expect((await ok(members(tenant, reader))).items.map((i: { type: string; user?: { id: string } }) => i.user?.id ?? i.type)).toEqual(['application', bob.id]);
    // the application loses its roles
    await ok(api.put(`/v1/${tenant.slug}/applications/${app.id}/roles`, { roleIds: [] }, auth));
    expect((await ok(members(tenant, reader))).items.map((i: { user: { id: string } }) => i.user.id)).toEqual([bob.id]);

    // Bob deleted (soft): no longer listed, though his assignment row stays until he is erased
    await ok(api.delete(`/v1/${tenant.slug}/users/${bob.id}`, auth));
    expect(await ok(members(tenant, reader))).toEqual({ items: [], nextCursor: null });
    const em = server.services.orm.em.fork() as EntityManager;
    expect(await em.execute('select user_id from user_access_role where tenant_id = ? and role_id = ?', [tenant.id, reader])).toEqual([{ user_id: bob.id }]);
  });

  it('pages with limit and cursor: every holder once, in order; a bad cursor or limit is 400', async () => {
    const { tenant, auth, reader, app, alice, bob } = await setUp();
    const carol = await signupMember(api, tenant.slug);
    for (const user of [alice, bob, carol]) await ok(api.put(`/v1/${tenant.slug}/users/${user.id}/roles`, { roleIds: [reader] }, auth));
    await ok(api.put(`/v1/${tenant.slug}/applications/${app.id}/roles`, { roleIds: [reader] }, auth));
    const expected = [`user:${alice.id}`, `user:${bob.id}`, `user:${carol.id}`, `application:${app.id}`];

    expect(await allPages(tenant, reader, 1)).toEqual({ pages: 4, holders: expected });
    expect(await allPages(tenant, reader, 3)).toEqual({ pages: 2, holders: expected });
    expect(await allPages(tenant, reader, 4)).toEqual({ pages: 1, holders: expected });

    expectError(await members(tenant, reader, '?cursor=not-a-cursor'), 400, 'BAD_REQUEST', 'invalid_cursor');
    const forged = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000000', 'organization', alice.id])).toString('base64url');
    expectError(await members(tenant, reader, `?cursor=${forged}`), 400, 'BAD_REQUEST', 'invalid_cursor');
    expect((await members(tenant, reader, '?limit=0')).status).toBe(400);
    expect((await members(tenant, reader, '?limit=201')).status).toBe(400);
    expect((await members(tenant, reader, '?cursor=')).status).toBe(400);
  });

  it('Admin or API key only: a Member gets 403; another tenant\'s role or an unknown id is 404', async () => {
    const { tenant, auth, reader, alice } = await setUp();
    await ok(api.put(`/v1/${tenant.slug}/users/${alice.id}/roles`, { roleIds: [reader] }, auth));
    expectError(await members(tenant, reader, '', alice.accessToken), 403, 'FORBIDDEN', 'admin_required');
    expectError(await api.get(`/v1/${tenant.slug}/roles/${reader}/members`), 401, 'UNAUTHORIZED');

    // an API key reads it (a test key too: it is a read)
    const key = (await ok(api.post(`/v1/${tenant.slug}/api-keys`, { name: 'read', environment: 'test' }, auth))).plaintext as string;
    expect((await ok(members(tenant, reader, '', key))).items.map((i: { user: { id: string } }) => i.user.id)).toEqual([alice.id]);

    const other = await createTenant(api);
    expectError(await members(other, reader), 404, 'NOT_FOUND', 'not_found');
    expectError(await members(tenant, '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND', 'not_found');
    expect((await members(tenant, 'not-a-uuid')).status).toBe(400);
  });
});

describe('RoleService.members', () => {
  it('answers the live holders of the tenant\'s role only, and 404 for another tenant\'s role', async () => {
    const { tenant, auth, reader, writer, app, alice, bob } = await setUp();
    await ok(api.put(`/v1/${tenant.slug}/users/${alice.id}/roles`, { roleIds: [reader] }, auth));
    await ok(api.put(`/v1/${tenant.slug}/users/${bob.id}/roles`, { roleIds: [writer] }, auth));
    await ok(api.put(`/v1/${tenant.slug}/applications/${app.id}/roles`, { roleIds: [reader, writer] }, auth));
    const em = server.services.orm.em.fork() as EntityManager;
    const roles = server.services.roles;

    const page = await roles.members(em, tenant.id, reader, { limit: 50 });
    expect(page.nextCursor).toBeNull();
    expect(page.items.map((m) => (m.type === 'user' ? m.user.email : m.application.clientId))).toEqual([alice.email, app.clientId]);
    const first = await roles.members(em, tenant.id, writer, { limit: 1 });
    expect(first.items.map((m) => m.type)).toEqual(['user']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await roles.members(em, tenant.id, writer, { limit: 1, cursor: first.nextCursor! });
    expect(second).toEqual({ items: [{ type: 'application', application: expect.objectContaining({ id: app.id, type: 'm2m' }) }], nextCursor: null });

    // another tenant's role id, even with a holder here, is not found
    const other = await setUp();
    await expect(roles.members(em, tenant.id, other.reader, { limit: 50 })).rejects.toMatchObject({ code: 'NOT_FOUND', details: { reason: 'not_found' } });
    await expect(roles.members(em, other.tenant.id, reader, { limit: 50 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(roles.members(em, tenant.id, reader, { limit: 50, cursor: 'x' })).rejects.toMatchObject({ code: 'BAD_REQUEST', details: { reason: 'invalid_cursor' } });
  });
});
