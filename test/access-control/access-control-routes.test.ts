import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, signupMember, type TestTenant } from '../helpers/api.js';
import { eventually } from '../helpers/polling.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The roles-and-permissions routes (CONTRACT "Roles and permissions", docs/oidc.md "Roles and permissions"): API
 * resources, roles, assignment to users and m2m applications, each refusal, audit and webhooks.
 */

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
});

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

async function apiKey(tenant: TestTenant, environment: 'live' | 'test'): Promise<string> {
  const res = await api.post(`/v1/${tenant.slug}/api-keys`, { name: environment, environment }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.plaintext as string;
}

const INVOICES = 'https://api.example.com/invoices';

async function createResource(tenant: TestTenant, identifier = INVOICES, permissions = [{ name: 'read:invoices', description: 'Read invoices' }, { name: 'write:invoices' }]) {
  const res = await api.post(`/v1/${tenant.slug}/api-resources`, { name: 'Invoices', identifier, permissions }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.apiResource as { id: string; identifier: string; permissions: { name: string; description: string }[] };
}

async function createRole(tenant: TestTenant, name: string, permissions: { resource: string; permission: string }[]) {
  const res = await api.post(`/v1/${tenant.slug}/roles`, { name, permissions }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.role as { id: string; name: string; permissions: { resource: string; permission: string }[] };
}

async function createM2m(tenant: TestTenant, type: 'm2m' | 'web' = 'm2m'): Promise<string> {
  const res = await api.post(`/v1/${tenant.slug}/applications`, { name: `App ${type}`, type, redirectUris: type === 'web' ? ['https://app.example.com/cb'] : undefined }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.application.id as string;
}

describe('API resources', () => {
  it('creates, lists, reads, replaces permissions, renames and deletes; every change audited', async () => {
    const tenant = await createTenant(api);
    const created = await createResource(tenant);
    expect(created).toMatchObject({
      name: 'Invoices', identifier: INVOICES,
      permissions: [{ name: 'read:invoices', description: 'Read invoices' }, { name: 'write:invoices', description: '' }],
    });
    expect(typeof (created as unknown as { createdAt: string }).createdAt).toBe('string');
    const list = await api.get(`/v1/${tenant.slug}/api-resources`, { token: tenant.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.items.map((r: { id: string }) => r.id)).toEqual([created.id]);
    const one = await api.get(`/v1/${tenant.slug}/api-resources/${created.id}`, { token: tenant.accessToken });
    expect(one.body.apiResource).toEqual(list.body.items[0]);

    // a role holding write:invoices loses it when the resource drops that permission; read:invoices is kept
    const role = await createRole(tenant, 'Accountant', [{ resource: INVOICES, permission: 'read:invoices' }, { resource: INVOICES, permission: 'write:invoices' }]);
    const patched = await api.patch(
      `/v1/${tenant.slug}/api-resources/${created.id}`,
      { name: 'Billing', permissions: [{ name: 'read:invoices', description: 'Read them' }, { name: 'approve:invoices' }] },
      { token: tenant.accessToken },
    );
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.apiResource).toMatchObject({
      id: created.id, name: 'Billing', identifier: INVOICES,
      permissions: [{ name: 'approve:invoices', description: '' }, { name: 'read:invoices', description: 'Read them' }],
    });
    const roleAfter = await api.get(`/v1/${tenant.slug}/roles/${role.id}`, { token: tenant.accessToken });
    expect(roleAfter.body.role.permissions).toEqual([{ resource: INVOICES, permission: 'read:invoices' }]);

    expect((await api.delete(`/v1/${tenant.slug}/api-resources/${created.id}`, { token: tenant.accessToken })).status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/api-resources/${created.id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expect((await api.get(`/v1/${tenant.slug}/roles/${role.id}`, { token: tenant.accessToken })).body.role.permissions).toEqual([]);

    const audit = await sql<{ action: string; target_id: string; details: Record<string, unknown> }>(
      `select action, target_id, details from audit_event where tenant_id = ? and action like 'ApiResource%' order by created_at, id`, [tenant.id],
    );
    expect(audit.map((a) => a.action)).toEqual(['ApiResourceCreated', 'ApiResourceUpdated', 'ApiResourceDeleted']);
    expect(audit[1]!.details).toMatchObject({ permissionsAdded: ['approve:invoices'], permissionsRemoved: ['write:invoices'] });
  });

  it('refuses a bad identifier, a taken identifier, a repeated or malformed permission', async () => {
    const tenant = await createTenant(api);
    const post = (body: Record<string, unknown>) => api.post(`/v1/${tenant.slug}/api-resources`, { name: 'X', ...body }, { token: tenant.accessToken });
    for (const identifier of ['http://api.example.com', 'not a url', 'https://api.example.com/#x', 'ftp://api.example.com', 'https://u:p@api.example.com']) {
      expectError(await post({ identifier }), 400, 'BAD_REQUEST', 'invalid_resource_identifier');
    }
    expect((await post({ identifier: 'http://localhost:8080/api' })).status).toBe(200);
    await createResource(tenant);
    expectError(await post({ identifier: INVOICES }), 409, 'CONFLICT', 'resource_identifier_taken');
    expectError(await post({ identifier: 'https://b.example.com', permissions: [{ name: 'a' }, { name: 'a' }] }), 400, 'BAD_REQUEST', 'duplicate_permission');
    expectError(await post({ identifier: 'https://b.example.com', permissions: [{ name: 'read invoices' }] }), 400, 'BAD_REQUEST', 'validation_failed');
    expectError(await post({ identifier: 'https://b.example.com', permissions: [{ name: 'x'.repeat(65) }] }), 400, 'BAD_REQUEST', 'validation_failed');
  });
});

describe('roles', () => {
  it('creates, lists, updates and deletes a role; deleting it removes it from every holder', async () => {
    const tenant = await createTenant(api);
    await createResource(tenant);
    const member = await signupMember(api, tenant.slug);
    const role = await createRole(tenant, 'Reader', [{ resource: INVOICES, permission: 'read:invoices' }]);
    expect(role).toMatchObject({ name: 'Reader', description: '', permissions: [{ resource: INVOICES, permission: 'read:invoices' }] });
    const list = await api.get(`/v1/${tenant.slug}/roles`, { token: tenant.accessToken });
    expect(list.body.items.map((r: { name: string }) => r.name)).toEqual(['Reader']);

    const updated = await api.patch(
      `/v1/${tenant.slug}/roles/${role.id}`,
      { name: 'Clerk', description: 'Keeps the books', permissions: [{ resource: INVOICES, permission: 'write:invoices' }] },
      { token: tenant.accessToken },
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.role).toMatchObject({ id: role.id, name: 'Clerk', description: 'Keeps the books', permissions: [{ resource: INVOICES, permission: 'write:invoices' }] });

    const put = await api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [role.id] }, { token: tenant.accessToken });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.roles.map((r: { name: string }) => r.name)).toEqual(['Clerk']);

    expect((await api.delete(`/v1/${tenant.slug}/roles/${role.id}`, { token: tenant.accessToken })).status).toBe(200);
    expectError(await api.get(`/v1/${tenant.slug}/roles/${role.id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expect((await api.get(`/v1/${tenant.slug}/users/${member.id}/roles`, { token: tenant.accessToken })).body.roles).toEqual([]);
    const audit = await sql<{ action: string }>(`select action from audit_event where tenant_id = ? and action like 'Role%' order by created_at, id`, [tenant.id]);
    expect(audit.map((a) => a.action)).toEqual(['RoleCreated', 'RoleUpdated', 'RoleDeleted']);
  });

  it('refuses an unknown resource or permission (400) and a taken name (409)', async () => {
    const tenant = await createTenant(api);
    await createResource(tenant);
    const post = (body: Record<string, unknown>) => api.post(`/v1/${tenant.slug}/roles`, body, { token: tenant.accessToken });
    const unknownResource = await post({ name: 'A', permissions: [{ resource: 'https://nope.example.com', permission: 'read' }] });
    expectError(unknownResource, 400, 'BAD_REQUEST', 'unknown_resource');
    expect(unknownResource.body.message).toContain('https://nope.example.com');
    expectError(await post({ name: 'A', permissions: [{ resource: INVOICES, permission: 'delete:invoices' }] }), 400, 'BAD_REQUEST', 'unknown_permission');
    await createRole(tenant, 'A', []);
    expectError(await post({ name: 'A', permissions: [] }), 409, 'CONFLICT', 'role_name_taken');
    const b = await createRole(tenant, 'B', []);
    expectError(await api.patch(`/v1/${tenant.slug}/roles/${b.id}`, { name: 'A' }, { token: tenant.accessToken }), 409, 'CONFLICT', 'role_name_taken');
    expect(await sql(`select 1 from access_role where tenant_id = ?`, [tenant.id])).toHaveLength(2);
  });
});

describe('assignment', () => {
  it('replaces the roles of a user and of an m2m application, audited with what was added and removed', async () => {
    const tenant = await createTenant(api);
    await createResource(tenant);
    const member = await signupMember(api, tenant.slug);
    const reader = await createRole(tenant, 'Reader', [{ resource: INVOICES, permission: 'read:invoices' }]);
    const writer = await createRole(tenant, 'Writer', [{ resource: INVOICES, permission: 'write:invoices' }]);
    const path = `/v1/${tenant.slug}/users/${member.id}/roles`;
    expect((await api.get(path, { token: tenant.accessToken })).body).toEqual({ roles: [] });
    expect((await api.put(path, { roleIds: [reader.id, writer.id, reader.id] }, { token: tenant.accessToken })).body.roles.map((r: { name: string }) => r.name)).toEqual(['Reader', 'Writer']);
    expect((await api.put(path, { roleIds: [writer.id] }, { token: tenant.accessToken })).status).toBe(200);
    const got = await api.get(path, { token: tenant.accessToken });
    expect(got.body.roles).toEqual([expect.objectContaining({ id: writer.id, name: 'Writer', permissions: [{ resource: INVOICES, permission: 'write:invoices' }] })]);
    const [changed] = await sql<{ details: Record<string, unknown>; target_id: string }>(
      `select details, target_id from audit_event where tenant_id = ? and action = 'UserRolesChanged' order by created_at desc, id desc limit 1`, [tenant.id],
    );
    expect(changed).toMatchObject({ target_id: member.id, details: { roles: ['Writer'], added: [], removed: ['Reader'] } });

    const m2m = await createM2m(tenant);
    const appPath = `/v1/${tenant.slug}/applications/${m2m}/roles`;
    const set = await api.put(appPath, { roleIds: [reader.id] }, { token: tenant.accessToken });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await api.get(appPath, { token: tenant.accessToken })).body.roles.map((r: { id: string }) => r.id)).toEqual([reader.id]);
    expect(await sql(`select 1 from audit_event where tenant_id = ? and action = 'ApplicationRolesChanged' and target_id = ?`, [tenant.id, m2m])).toHaveLength(1);
  });

  it('refuses an unknown role (400), a non-m2m application (400), an unknown user or application (404)', async () => {
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const other = await createTenant(api);
    const foreignRole = await createRole(other, 'Foreign', []);
    const unknown = await api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [foreignRole.id] }, { token: tenant.accessToken });
    expectError(unknown, 400, 'BAD_REQUEST', 'unknown_role');
    expect(unknown.body.message).toContain(foreignRole.id);
    const web = await createM2m(tenant, 'web');
    expectError(await api.put(`/v1/${tenant.slug}/applications/${web}/roles`, { roleIds: [] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'application_not_m2m');
    const missing = '00000000-0000-4000-8000-000000000000';
    expectError(await api.put(`/v1/${tenant.slug}/users/${missing}/roles`, { roleIds: [] }, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await api.get(`/v1/${tenant.slug}/applications/${missing}/roles`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: ['not-a-uuid'] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
  });
});

describe('who may', () => {
  it('a Member gets 403, a test key 403 on changes (reads allowed), a live key may change, another tenant\'s ids are 404', async () => {
    const tenant = await createTenant(api);
    const resource = await createResource(tenant);
    const role = await createRole(tenant, 'Reader', [{ resource: INVOICES, permission: 'read:invoices' }]);
    const member = await signupMember(api, tenant.slug);
    const m2m = await createM2m(tenant);
    const s = tenant.slug;
    const changes: [string, string, Record<string, unknown>][] = [
      ['POST', `/v1/${s}/api-resources`, { name: 'Y', identifier: 'https://y.example.com' }],
      ['PATCH', `/v1/${s}/api-resources/${resource.id}`, { name: 'Y' }],
      ['DELETE', `/v1/${s}/api-resources/${resource.id}`, {}],
      ['POST', `/v1/${s}/roles`, { name: 'Y', permissions: [] }],
      ['PATCH', `/v1/${s}/roles/${role.id}`, { name: 'Z' }],
      ['DELETE', `/v1/${s}/roles/${role.id}`, {}],
      ['PUT', `/v1/${s}/users/${member.id}/roles`, { roleIds: [role.id] }],
      ['PUT', `/v1/${s}/applications/${m2m}/roles`, { roleIds: [role.id] }],
    ];
    const reads = [`/v1/${s}/api-resources`, `/v1/${s}/api-resources/${resource.id}`, `/v1/${s}/roles`, `/v1/${s}/roles/${role.id}`, `/v1/${s}/users/${member.id}/roles`, `/v1/${s}/applications/${m2m}/roles`];
    const send = (method: string, path: string, body: Record<string, unknown>, token: string) =>
      method === 'POST' ? api.post(path, body, { token }) : method === 'PATCH' ? api.patch(path, body, { token }) : method === 'PUT' ? api.put(path, body, { token }) : api.delete(path, { token });

    const testKey = await apiKey(tenant, 'test');
    for (const [method, path, body] of changes) {
      expectError(await send(method, path, body, member.accessToken), 403, 'FORBIDDEN', 'admin_required');
      expectError(await send(method, path, body, testKey), 403, 'FORBIDDEN', 'live_key_required');
    }
    for (const path of reads) {
      expectError(await api.get(path, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
      expect((await api.get(path, { token: testKey })).status, path).toBe(200);
    }
    expect(await sql(`select 1 from audit_event where tenant_id = ? and (action like 'Role%' or action like 'ApiResource%' or action like '%RolesChanged') and actor_type = 'api_key'`, [tenant.id])).toEqual([]);

    // another workspace's admin, on its own slug, does not see these ids
    const other = await createTenant(api);
    const o = other.slug;
    for (const [method, path, body] of changes.filter(([m]) => m !== 'POST')) {
      expectError(await send(method, path.replace(`/v1/${s}/`, `/v1/${o}/`), body, other.accessToken), 404, 'NOT_FOUND');
    }
    for (const path of reads.filter((p) => /\/[0-9a-f-]{36}/.test(p))) expectError(await api.get(path.replace(`/v1/${s}/`, `/v1/${o}/`), { token: other.accessToken }), 404, 'NOT_FOUND');

    const liveKey = await apiKey(tenant, 'live');
    for (const [method, path, body] of [...changes.filter(([m]) => m !== 'DELETE'), ...changes.filter(([m]) => m === 'DELETE').reverse()]) expect((await send(method, path, body, liveKey)).status, `${method} ${path}`).toBe(200);
  });
});

describe('webhooks', () => {
  it('delivers the roles-and-permissions audit actions to a subscribed endpoint', async () => {
    const tenant = await createTenant(api);
    const receiver = await startWebhookReceiver();
    try {
      const hook = await api.post(
        `/v1/${tenant.slug}/webhooks`,
        { url: receiver.url, eventTypes: ['ApiResourceCreated', 'RoleCreated', 'UserRolesChanged', 'ApplicationRolesChanged'] },
        { token: tenant.accessToken },
      );
      expect(hook.status, JSON.stringify(hook.body)).toBe(200);
      receiver.secrets.push(hook.body.secret as string);
      await createResource(tenant);
      const role = await createRole(tenant, 'Reader', [{ resource: INVOICES, permission: 'read:invoices' }]);
      const member = await signupMember(api, tenant.slug);
      expect((await api.put(`/v1/${tenant.slug}/users/${member.id}/roles`, { roleIds: [role.id] }, { token: tenant.accessToken })).status).toBe(200);
      const m2m = await createM2m(tenant);
      expect((await api.put(`/v1/${tenant.slug}/applications/${m2m}/roles`, { roleIds: [role.id] }, { token: tenant.accessToken })).status).toBe(200);
      const types = await eventually(() => {
        const seen = receiver.received.map((r) => r.body.type).sort();
        return seen.length >= 4 ? seen : undefined;
      }, 'four webhook deliveries', 30_000);
      expect(types).toEqual(['ApiResourceCreated', 'ApplicationRolesChanged', 'RoleCreated', 'UserRolesChanged']);
    } finally {
      await receiver.stop();
    }
  });
});
