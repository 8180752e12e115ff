import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

const suite = useTestServer({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });

async function createOrganization(tenant: TestTenant, name = `Acme ${unique()}`, token = tenant.accessToken) {
  const res = await suite.api.post(`/v1/${tenant.slug}/organizations`, { name, description: 'A customer' }, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.organization as { id: string; name: string; description: string | null; createdAt: string };
}

async function createRole(tenant: TestTenant, name: string, permissions: string[]) {
  const res = await suite.api.post(`/v1/${tenant.slug}/organization-roles`, { name, permissions }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.organizationRole as { id: string; name: string; permissions: string[] };
}

async function apiKey(tenant: TestTenant, environment: 'live' | 'test'): Promise<string> {
  const res = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: environment, environment }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.plaintext as string;
}

async function auditActions(tenant: TestTenant, action: string) {
  const res = await suite.api.get(`/v1/${tenant.slug}/audit?action=${action}`, { token: tenant.accessToken });
  expect(res.status).toBe(200);
  return res.body.items as Record<string, any>[];
}

describe('organizations', () => {
  it('CRUD: create, read, rename, list with search, limit and cursor, delete; audited', async () => {
    const tenant = await createTenant(suite.api);
    const created = await createOrganization(tenant, 'Globex Corporation');
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'description', 'id', 'name']);
    expect(created).toMatchObject({ name: 'Globex Corporation', description: 'A customer' });
    const others = [await createOrganization(tenant, 'Initech'), await createOrganization(tenant, 'Umbrella globe')];

    expect((await suite.api.get(`/v1/${tenant.slug}/organizations/${created.id}`, { token: tenant.accessToken })).body).toEqual(created);

    const patched = await suite.api.patch(`/v1/${tenant.slug}/organizations/${created.id}`, { name: 'Globex', description: null }, { token: tenant.accessToken });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ id: created.id, name: 'Globex', description: null });

    const searched = await suite.api.get(`/v1/${tenant.slug}/organizations?search=GLOB`, { token: tenant.accessToken });
    expect(searched.body.items.map((o: { name: string }) => o.name)).toEqual(['Globex', 'Umbrella globe']);
    expect(searched.body.nextCursor).toBeNull();

    const first = await suite.api.get(`/v1/${tenant.slug}/organizations?limit=2`, { token: tenant.accessToken });
    expect(first.body.items.map((o: { id: string }) => o.id)).toEqual([created.id, others[0]!.id]);
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await suite.api.get(`/v1/${tenant.slug}/organizations?limit=2&cursor=${first.body.nextCursor}`, { token: tenant.accessToken });
    expect(second.body).toEqual({ items: [{ ...others[1], memberCount: 0 }], nextCursor: null });
    expectError(await suite.api.get(`/v1/${tenant.slug}/organizations?cursor=bogus`, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'invalid_cursor');
    expectError(await suite.api.get(`/v1/${tenant.slug}/organizations?limit=201`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await suite.api.post(`/v1/${tenant.slug}/organizations`, { name: '  ' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');

    expect((await suite.api.delete(`/v1/${tenant.slug}/organizations/${created.id}`, { token: tenant.accessToken })).body).toEqual({ ok: true });
    expectError(await suite.api.get(`/v1/${tenant.slug}/organizations/${created.id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND');

    for (const action of ['OrganizationCreated', 'OrganizationUpdated', 'OrganizationDeleted']) {
      const items = await auditActions(tenant, action);
      expect(items.some((e) => e.targetId === created.id && e.actorId === tenant.adminId), action).toBe(true);
    }
  });

  it('Member 403, test key 403 live_key_required on changes (reads allowed), live key may change, other tenant 404', async () => {
    const tenant = await createTenant(suite.api);
    const org = await createOrganization(tenant);
    const member = await signupMember(suite.api, tenant.slug);
    expectError(await suite.api.get(`/v1/${tenant.slug}/organizations`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expectError(await suite.api.post(`/v1/${tenant.slug}/organizations`, { name: 'x' }, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');

    const testKey = await apiKey(tenant, 'test');
    expect((await suite.api.get(`/v1/${tenant.slug}/organizations/${org.id}`, { token: testKey })).status).toBe(200);
    expectError(await suite.api.post(`/v1/${tenant.slug}/organizations`, { name: 'x' }, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');
    expectError(await suite.api.post(`/v1/${tenant.slug}/organizations/${org.id}/members`, { userId: member.id }, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');
    expectError(await suite.api.post(`/v1/${tenant.slug}/organization-roles`, { name: 'r', permissions: [] }, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');

    const liveKey = await apiKey(tenant, 'live');
    const byKey = await createOrganization(tenant, 'By key', liveKey);
    const [event] = (await auditActions(tenant, 'OrganizationCreated')).filter((e) => e.targetId === byKey.id);
    expect(event).toMatchObject({ actorType: 'api_key' });

    const other = await createTenant(suite.api);
    expectError(await suite.api.get(`/v1/${other.slug}/organizations/${org.id}`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.patch(`/v1/${other.slug}/organizations/${org.id}`, { name: 'mine' }, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.delete(`/v1/${other.slug}/organizations/${org.id}`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.get(`/v1/${other.slug}/organizations/${org.id}/members`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expect((await suite.api.get(`/v1/${other.slug}/organizations`, { token: other.accessToken })).body.items).toEqual([]);
  });

  it('organization roles: CRUD with permission names, unique names 409, bad permission 400, other tenant 404', async () => {
    const tenant = await createTenant(suite.api);
    const role = await createRole(tenant, 'billing', ['read:invoices', 'pay:invoices', 'read:invoices']);
    expect(role).toMatchObject({ name: 'billing', description: null, permissions: ['read:invoices', 'pay:invoices'] });
    expectError(await suite.api.post(`/v1/${tenant.slug}/organization-roles`, { name: 'billing', permissions: [] }, { token: tenant.accessToken }), 409, 'CONFLICT', 'organization_role_name_taken');
    expectError(await suite.api.post(`/v1/${tenant.slug}/organization-roles`, { name: 'x', permissions: ['no spaces'] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    const owner = await createRole(tenant, 'owner', ['manage:all']);
    const listed = await suite.api.get(`/v1/${tenant.slug}/organization-roles`, { token: tenant.accessToken });
    expect(listed.body.items.map((r: { name: string }) => r.name)).toEqual(['billing', 'owner']);
    const patched = await suite.api.patch(`/v1/${tenant.slug}/organization-roles/${role.id}`, { permissions: ['read:invoices'], description: 'Pays' }, { token: tenant.accessToken });
    expect(patched.body).toMatchObject({ id: role.id, name: 'billing', description: 'Pays', permissions: ['read:invoices'] });
    expectError(await suite.api.patch(`/v1/${tenant.slug}/organization-roles/${role.id}`, { name: 'owner' }, { token: tenant.accessToken }), 409, 'CONFLICT', 'organization_role_name_taken');
    expect((await suite.api.get(`/v1/${tenant.slug}/organization-roles/${owner.id}`, { token: tenant.accessToken })).body.name).toBe('owner');

    const other = await createTenant(suite.api);
    expectError(await suite.api.get(`/v1/${other.slug}/organization-roles/${role.id}`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.delete(`/v1/${other.slug}/organization-roles/${role.id}`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expect((await suite.api.delete(`/v1/${tenant.slug}/organization-roles/${owner.id}`, { token: tenant.accessToken })).body).toEqual({ ok: true });
    for (const action of ['OrganizationRoleCreated', 'OrganizationRoleUpdated', 'OrganizationRoleDeleted']) {
      expect((await auditActions(tenant, action)).length, action).toBeGreaterThan(0);
    }
  });

  it('members: add with roles, list, change roles, remove; one person in two organizations; 404 and 409 cases; me/organizations', async () => {
    const tenant = await createTenant(suite.api);
    const [acme, globex] = [await createOrganization(tenant, 'Acme'), await createOrganization(tenant, 'Globex')];
    await createRole(tenant, 'owner', ['manage:members']);
    await createRole(tenant, 'billing', ['read:invoices']);
    const person = await signupMember(suite.api, tenant.slug);
    const path = (org: { id: string }) => `/v1/${tenant.slug}/organizations/${org.id}/members`;

    const added = await suite.api.post(path(acme), { userId: person.id, roles: ['owner', 'billing'] }, { token: tenant.accessToken });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.member.roles).toEqual(['billing', 'owner']);
    expect(added.body.member.user).toMatchObject({ id: person.id, email: person.email, role: 'Member', tenant: { slug: tenant.slug } });
    expect((await suite.api.post(path(globex), { userId: person.id }, { token: tenant.accessToken })).body.member.roles).toEqual([]);

    expectError(await suite.api.post(path(acme), { userId: person.id }, { token: tenant.accessToken }), 409, 'CONFLICT', 'already_member');
    expectError(await suite.api.post(path(acme), { userId: tenant.adminId, roles: ['nope'] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'unknown_organization_role');
    expectError(await suite.api.post(path(acme), { userId: '00000000-0000-4000-8000-000000000000' }, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    const other = await createTenant(suite.api);
    expectError(await suite.api.post(path(acme), { userId: other.adminId }, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.post(`/v1/${other.slug}/organizations/${acme.id}/members`, { userId: other.adminId }, { token: other.accessToken }), 404, 'NOT_FOUND');

    const mine = await suite.api.get(`/v1/${tenant.slug}/me/organizations`, { token: person.accessToken });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({ items: [{ id: acme.id, name: 'Acme', roles: ['billing', 'owner'] }, { id: globex.id, name: 'Globex', roles: [] }] });

    const changed = await suite.api.patch(`${path(globex)}/${person.id}`, { roles: ['billing'] }, { token: tenant.accessToken });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.member.roles).toEqual(['billing']);
    expectError(await suite.api.patch(`${path(globex)}/${tenant.adminId}`, { roles: [] }, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    const listed = await suite.api.get(path(globex), { token: tenant.accessToken });
    expect(listed.body.items.map((m: { user: { id: string }; roles: string[] }) => [m.user.id, m.roles])).toEqual([[person.id, ['billing']]]);

    expect((await suite.api.delete(`${path(acme)}/${person.id}`, { token: tenant.accessToken })).body).toEqual({ ok: true });
    expectError(await suite.api.delete(`${path(acme)}/${person.id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expect((await suite.api.get(`/v1/${tenant.slug}/me/organizations`, { token: person.accessToken })).body.items.map((o: { id: string }) => o.id)).toEqual([globex.id]);

    const [removed] = await auditActions(tenant, 'OrganizationMemberRemoved');
    expect(removed).toMatchObject({ targetType: 'organization', targetId: acme.id, details: { userId: person.id, roles: ['billing', 'owner'] } });
    const [rolesChanged] = await auditActions(tenant, 'OrganizationMemberRolesChanged');
    expect(rolesChanged!.details).toMatchObject({ userId: person.id, from: [], to: ['billing'] });

    // an API key has no organizations of its own
    expectError(await suite.api.get(`/v1/${tenant.slug}/me/organizations`, { token: await apiKey(tenant, 'live') }), 401, 'UNAUTHORIZED', 'user_token_required');
  });

  it('a deleted user and a deleted organization or role leave no membership behind', async () => {
    const tenant = await createTenant(suite.api);
    const [acme, globex] = [await createOrganization(tenant, 'Acme'), await createOrganization(tenant, 'Globex')];
    await createRole(tenant, 'owner', []);
    const role = await createRole(tenant, 'billing', []);
    const leaving = await signupMember(suite.api, tenant.slug);
    const staying = await signupMember(suite.api, tenant.slug);
    for (const userId of [leaving.id, staying.id]) {
      for (const org of [acme, globex]) {
        expect((await suite.api.post(`/v1/${tenant.slug}/organizations/${org.id}/members`, { userId, roles: ['owner', 'billing'] }, { token: tenant.accessToken })).status).toBe(200);
      }
    }
    const counts = async () => ((await suite.api.get(`/v1/${tenant.slug}/organizations`, { token: tenant.accessToken })).body.items as { memberCount: number }[])
      .map((org) => org.memberCount);
    expect(await counts()).toEqual([2, 2]);
    expect((await suite.api.delete(`/v1/${tenant.slug}/users/${leaving.id}`, { token: tenant.accessToken })).status).toBe(200);
    // the list counts live members only: a soft-deleted user no longer counts
    expect(await counts()).toEqual([1, 1]);
    const members = await suite.api.get(`/v1/${tenant.slug}/organizations/${acme.id}/members`, { token: tenant.accessToken });
    expect(members.body.items.map((m: { user: { id: string } }) => m.user.id)).toEqual([staying.id]);
    expectError(await suite.api.post(`/v1/${tenant.slug}/organizations/${acme.id}/members`, { userId: leaving.id }, { token: tenant.accessToken }), 404, 'NOT_FOUND');

    expect((await suite.api.delete(`/v1/${tenant.slug}/organization-roles/${role.id}`, { token: tenant.accessToken })).status).toBe(200);
    expect((await suite.api.delete(`/v1/${tenant.slug}/organizations/${acme.id}`, { token: tenant.accessToken })).status).toBe(200);
    const mine = await suite.api.get(`/v1/${tenant.slug}/me/organizations`, { token: staying.accessToken });
    expect(mine.body.items).toEqual([{ id: globex.id, name: 'Globex', roles: ['owner'] }]);
    const rows = await suite.server.services.orm.em.fork().execute<{ n: number }[]>(
      'select count(*)::int as n from organization_membership where organization_id = ?', [acme.id],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('delivers organization events to webhooks', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const tenant = await createTenant(suite.api);
      const hook = await suite.api.post(`/v1/${tenant.slug}/webhooks`, { url: receiver.url, eventTypes: ['OrganizationCreated', 'OrganizationMemberAdded'] }, { token: tenant.accessToken });
      expect(hook.status, JSON.stringify(hook.body)).toBe(200);
      receiver.secrets.push(hook.body.secret as string);
      const org = await createOrganization(tenant);
      await suite.api.post(`/v1/${tenant.slug}/organizations/${org.id}/members`, { userId: tenant.adminId }, { token: tenant.accessToken });
      const received = await receiver.waitFor(2, (w) => String(w.body.type).startsWith('Organization'));
      expect(received.map((w) => w.body.type).sort()).toEqual(['OrganizationCreated', 'OrganizationMemberAdded']);
      expect(received.every((w) => (w.body.data as { targetId: string }).targetId === org.id)).toBe(true);
    } finally {
      await receiver.stop();
    }
  });

  it('invitations into an organization: accepting makes the new person a member with the invite\'s roles', async () => {
    const tenant = await createTenant(suite.api);
    const org = await createOrganization(tenant, 'Acme');
    await createRole(tenant, 'billing', ['read:invoices']);
    const email = `invitee-${unique()}@example.com`;
    const invited = await suite.api.post(`/v1/${tenant.slug}/invites`, { email, organizationId: org.id, organizationRoles: ['billing'] }, { token: tenant.accessToken });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    expect(invited.body.invite).toMatchObject({ organizationId: org.id, organizationRoles: ['billing'] });

    expectError(await suite.api.post(`/v1/${tenant.slug}/invites`, { email, organizationId: org.id, organizationRoles: ['nope'] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'unknown_organization_role');
    expectError(await suite.api.post(`/v1/${tenant.slug}/invites`, { email, organizationId: '00000000-0000-4000-8000-000000000000' }, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.post(`/v1/${tenant.slug}/invites`, { email, organizationRoles: ['billing'] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    const testKey = await apiKey(tenant, 'test');
    expectError(await suite.api.post(`/v1/${tenant.slug}/invites`, { email, organizationId: org.id }, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');
    expectError(await suite.api.post(`/v1/${tenant.slug}/invites/${invited.body.invite.id}/resend`, {}, { token: testKey }), 403, 'FORBIDDEN', 'live_key_required');

    const accepted = await suite.api.post('/v1/invites/accept', { token: invited.body.token, password: PASSWORD });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const mine = await suite.api.get(`/v1/${tenant.slug}/me/organizations`, { token: accepted.body.accessToken });
    expect(mine.body.items).toEqual([{ id: org.id, name: 'Acme', roles: ['billing'] }]);
    const [added] = await auditActions(tenant, 'OrganizationMemberAdded');
    expect(added).toMatchObject({ targetId: org.id, details: { userId: accepted.body.user.id, via: 'invite' } });
  });
  it('invitations into an organization: an existing account accepts signed in and keeps its workspace role', async () => {
    const tenant = await createTenant(suite.api);
    const org = await createOrganization(tenant, 'Acme');
    await createRole(tenant, 'owner', ['manage:members']);
    const person = await signupMember(suite.api, tenant.slug);
    const stranger = await signupMember(suite.api, tenant.slug);
    // a plain invite to an existing address stays a conflict; one into an organization is allowed
    expectError(await suite.api.post(`/v1/${tenant.slug}/invites`, { email: person.email }, { token: tenant.accessToken }), 409, 'CONFLICT', 'email_taken');
    const invited = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: person.email, organizationId: org.id, organizationRoles: ['owner'] }, { token: tenant.accessToken });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    const token = invited.body.token as string;
    const accept = (accessToken: string, presented = token) => suite.api.post(`/v1/${tenant.slug}/me/invites/accept`, { token: presented }, { token: accessToken });

    expectError(await suite.api.post('/v1/invites/accept', { token, password: PASSWORD }), 409, 'CONFLICT', 'email_taken');
    expectError(await accept(stranger.accessToken), 403, 'FORBIDDEN', 'invite_email_mismatch');
    const other = await createTenant(suite.api);
    expectError(await suite.api.post(`/v1/${other.slug}/me/invites/accept`, { token }, { token: other.accessToken }), 401, 'UNAUTHORIZED', 'invite_invalid');

    const accepted = await accept(person.accessToken);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body).toEqual({ organizationId: org.id });
    const mine = await suite.api.get(`/v1/${tenant.slug}/me/organizations`, { token: person.accessToken });
    expect(mine.body.items).toEqual([{ id: org.id, name: 'Acme', roles: ['owner'] }]);
    expect((await suite.api.get(`/v1/${tenant.slug}/me`, { token: person.accessToken })).body.role).toBe('Member');
    expectError(await accept(person.accessToken), 401, 'UNAUTHORIZED', 'invite_invalid');

    // an invite without an organization cannot be accepted this way
    const plain = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: `new-${unique()}@example.com` }, { token: tenant.accessToken });
    expectError(await accept(person.accessToken, plain.body.token as string), 401, 'UNAUTHORIZED', 'invite_invalid');
  });

  it('pages the members of an organization oldest first with limit and cursor, roles read for each page, a deleted member left out', async () => {
    const tenant = await createTenant(suite.api);
    await createRole(tenant, 'owner', ['manage:members']);
    const org = await createOrganization(tenant);
    const people = [];
    for (let i = 0; i < 5; i++) {
      const person = await signupMember(suite.api, tenant.slug);
      const added = await suite.api.post(`/v1/${tenant.slug}/organizations/${org.id}/members`, { userId: person.id, roles: i % 2 === 0 ? ['owner'] : [] }, { token: tenant.accessToken });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      people.push(person);
    }
    expect((await suite.api.delete(`/v1/${tenant.slug}/users/${people[3]!.id}`, { token: tenant.accessToken })).status).toBe(200);
    const url = (query: string) => `/v1/${tenant.slug}/organizations/${org.id}/members${query}`;
    const seen: [string, string[]][] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await suite.api.get(url(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), { token: tenant.accessToken });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      for (const member of res.body.items as { user: { id: string }; roles: string[] }[]) seen.push([member.user.id, member.roles]);
      cursor = res.body.nextCursor as string | null;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(2);
    expect(seen).toEqual([[people[0]!.id, ['owner']], [people[1]!.id, []], [people[2]!.id, ['owner']], [people[4]!.id, ['owner']]]);
    const all = await suite.api.get(url(''), { token: tenant.accessToken });
    expect(all.body.items).toHaveLength(4);
    expect(all.body.nextCursor).toBeNull();

    expectError(await suite.api.get(url('?cursor=not-a-cursor'), { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'invalid_cursor');
    expectError(await suite.api.get(url('?limit=0'), { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await suite.api.get(url('?limit=201'), { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });
});
