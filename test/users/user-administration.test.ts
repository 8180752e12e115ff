import type { EntityManager } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique } from '../helpers/api.js';
import { startTestServer } from '../helpers/server.js';
import { useTestServer } from '../helpers/suite.js';

/**
 * User administration and sign-up control (docs/api-rules.md "Users and sign-up"): PATCH users/{id}
 * (role, suspension), GET users filters, the tenant's sign-up policy and TENANT_CREATION_TOKEN.
 */
const suite = useTestServer();

async function auditActions(tenantId: string, userId: string): Promise<{ action: string; actor_id: string | null; details: Record<string, unknown> }[]> {
  return (await (suite.server.services.orm.em.fork() as EntityManager).execute(
    'select action, actor_id, details from audit_event where tenant_id = ? and target_id = ? order by created_at, id',
    [tenantId, userId],
  )) as { action: string; actor_id: string | null; details: Record<string, unknown> }[];
}

describe('PATCH users/{userId}', () => {
  it('suspends a user (their session is refused at once, login answers user_suspended) and reactivates them', async () => {
    const { api } = suite;
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    const suspended = await api.patch(`/v1/${tenant.slug}/users/${member.id}`, { status: 'Suspended' }, { token: tenant.accessToken });
    expect(suspended.status, JSON.stringify(suspended.body)).toBe(200);
    expect(suspended.body).toMatchObject({ id: member.id, status: 'Suspended' });
    expectError(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken }), 401, 'UNAUTHORIZED');
    expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'user_suspended');

    const back = await api.patch(`/v1/${tenant.slug}/users/${member.id}`, { status: 'Active' }, { token: tenant.accessToken });
    expect(back.body.status).toBe('Active');
    expect((await api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD })).status).toBe(200);

    const audit = await auditActions(tenant.id, member.id);
    expect(audit.filter((a) => a.action === 'UserSuspended' || a.action === 'UserReactivated').map((a) => [a.action, a.actor_id])).toEqual([
      ['UserSuspended', tenant.adminId],
      ['UserReactivated', tenant.adminId],
    ]);
  });

  it('promotes and demotes, effective on existing sessions at once both ways', async () => {
    const { api } = suite;
    const tenant = await createTenant(api);
    const member = await signupMember(api, tenant.slug);
    expectError(await api.get(`/v1/${tenant.slug}/users`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    const promoted = await api.patch(`/v1/${tenant.slug}/users/${member.id}`, { role: 'Admin' }, { token: tenant.accessToken });
    expect(promoted.body.role).toBe('Admin');
    expect((await api.get(`/v1/${tenant.slug}/users`, { token: member.accessToken })).status).toBe(200);
    await api.patch(`/v1/${tenant.slug}/users/${member.id}`, { role: 'Member' }, { token: tenant.accessToken });
    expectError(await api.get(`/v1/${tenant.slug}/users`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    const audit = await auditActions(tenant.id, member.id);
    expect(audit.filter((a) => a.action === 'UserRoleChanged').map((a) => a.details)).toEqual([
      expect.objectContaining({ from: 'Member', to: 'Admin' }),
      expect.objectContaining({ from: 'Admin', to: 'Member' }),
    ]);
  });

  it('protects the last active Admin from demotion and suspension (409 last_admin), also by an API key', async () => {
    const { api } = suite;
    const tenant = await createTenant(api);
    expectError(await api.patch(`/v1/${tenant.slug}/users/${tenant.adminId}`, { role: 'Member' }, { token: tenant.accessToken }), 409, 'CONFLICT', 'last_admin');
    const key = await api.post(`/v1/${tenant.slug}/api-keys`, { name: 'ops', environment: 'live' }, { token: tenant.accessToken });
    expectError(await api.patch(`/v1/${tenant.slug}/users/${tenant.adminId}`, { status: 'Suspended' }, { token: key.body.plaintext }), 409, 'CONFLICT', 'last_admin');
    // with a second admin, the first may step down
    const second = await signupMember(api, tenant.slug);
    await api.patch(`/v1/${tenant.slug}/users/${second.id}`, { role: 'Admin' }, { token: tenant.accessToken });
    expect((await api.patch(`/v1/${tenant.slug}/users/${tenant.adminId}`, { role: 'Member' }, { token: tenant.accessToken })).status).toBe(200);
  });

  it('answers 404 for another tenant\'s user and refuses bodies outside the schema', async () => {
    const { api } = suite;
    const tenant = await createTenant(api);
    const other = await createTenant(api);
    expectError(await api.patch(`/v1/${tenant.slug}/users/${other.adminId}`, { status: 'Suspended' }, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await api.patch(`/v1/${tenant.slug}/users/${tenant.adminId}`, { status: 'Pending' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await api.patch(`/v1/${tenant.slug}/users/${tenant.adminId}`, { role: 'Owner' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });
});

describe('GET users filters', () => {
  it('finds users by a part of their email (case-insensitive, LIKE characters taken literally), role and status', async () => {
    const { api } = suite;
    const tenant = await createTenant(api);
    const tag = unique();
    const alice = await signupMember(api, tenant.slug, `alice_${tag}@example.com`);
    const bob = await signupMember(api, tenant.slug, `bob-${tag}@example.org`);
    await api.patch(`/v1/${tenant.slug}/users/${bob.id}`, { status: 'Suspended' }, { token: tenant.accessToken });
    const list = async (query: string) =>
      ((await api.get(`/v1/${tenant.slug}/users?${query}`, { token: tenant.accessToken })).body.items as { id: string }[]).map((u) => u.id);
    expect(await list(`search=ALICE_${tag}`)).toEqual([alice.id]);
    expect(await list('search=example.org')).toEqual([bob.id]);
    // `_` and `%` are literal characters, not wildcards
    expect(await list(`search=${encodeURIComponent('%')}`)).toEqual([]);
    expect(await list('search=e_ample')).toEqual([]);
    expect(await list('status=Suspended')).toEqual([bob.id]);
    expect(await list('role=Admin')).toEqual([tenant.adminId]);
    expect(await list(`role=Member&status=Active&limit=10`)).toEqual([alice.id]);
    expectError(await api.get(`/v1/${tenant.slug}/users?search=`, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    expectError(await api.get(`/v1/${tenant.slug}/users?status=Gone`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });
});

describe('sign-up policy', () => {
  it('refuses sign-ups by policy with their reasons, while invites work under every policy', async () => {
    const { api } = suite;
    const tenant = await createTenant(api);
    const onlyDomain = await api.patch(`/v1/${tenant.slug}/tenant`, { signupPolicy: 'Domains', signupEmailDomains: ['Acme.Example'] }, { token: tenant.accessToken });
    expect(onlyDomain.body).toMatchObject({ signupPolicy: 'Domains', signupEmailDomains: ['acme.example'] });
    expectError(await api.post(`/v1/${tenant.slug}/auth/signup`, { email: `x-${unique()}@other.example`, password: PASSWORD }), 403, 'FORBIDDEN', 'signup_domain_not_allowed');
    expect((await api.post(`/v1/${tenant.slug}/auth/signup`, { email: `x-${unique()}@ACME.example`, password: PASSWORD })).status).toBe(200);

    await api.patch(`/v1/${tenant.slug}/tenant`, { signupPolicy: 'InviteOnly' }, { token: tenant.accessToken });
    expectError(await api.post(`/v1/${tenant.slug}/auth/signup`, { email: `y-${unique()}@acme.example`, password: PASSWORD }), 403, 'FORBIDDEN', 'signup_disabled');
    const invited = `z-${unique()}@anywhere.example`;
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: invited }, { token: tenant.accessToken });
    expect(invite.status).toBe(200);
    const accepted = await api.post('/v1/invites/accept', { token: invite.body.token, password: PASSWORD });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);

    expectError(await api.patch(`/v1/${tenant.slug}/tenant`, { signupPolicy: 'Closed' }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await api.patch(`/v1/${tenant.slug}/tenant`, { signupEmailDomains: ['not a domain'] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });
});

describe('TENANT_CREATION_TOKEN', () => {
  it('needs the token as a bearer credential to create a workspace when set', async () => {
    const token = `creation-${unique()}-${unique()}`;
    const guarded = await startTestServer({ TENANT_CREATION_TOKEN: token });
    try {
      const api = new Api(guarded.url);
      const body = { name: `Guarded ${unique()}`, email: `g-${unique()}@example.com`, password: PASSWORD };
      expectError(await api.post('/v1/tenants', body), 401, 'UNAUTHORIZED', 'tenant_creation_token_required');
      expectError(await api.post('/v1/tenants', body, { token: `${token}x` }), 401, 'UNAUTHORIZED', 'tenant_creation_token_required');
      expect((await api.post('/v1/tenants', body, { token })).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});
