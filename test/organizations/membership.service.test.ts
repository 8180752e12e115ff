import { describe, expect, it } from 'vitest';
import { findPermissionsOfMember } from '../../src/queries/organization-membership.js';
import { organizationsClaim } from '../../src/services/organizations/organization-claims.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: organization membership (docs/organizations.md "Members"): OrganizationMembershipService
 * over the role template, what the `organizations` claim and an organization token carry.
 */

const suite = useServices();

describe('organization membership', () => {
  it('adds a member once with template roles, resolves their permissions, and forgets them when removed', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const { organizations, organizationRoles, organizationMembers } = suite.services;
    await organizationRoles.create(suite.scope(tenant, actor), { name: 'billing', permissions: ['invoices:read', 'invoices:pay'] });
    await organizationRoles.create(suite.scope(tenant, actor), { name: 'viewer', permissions: ['invoices:read'] });
    const org = await organizations.create(suite.scope(tenant, actor), { name: 'Acme' });

    const member = await organizationMembers.add(suite.scope(tenant, actor), org.id, user.id, ['viewer', 'billing']);
    expect(member.roles).toEqual(['billing', 'viewer']);
    await expect(organizationMembers.add(suite.scope(tenant, actor), org.id, user.id, []))
      .rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'already_member' } });
    expect(await findPermissionsOfMember(suite.em(), tenant.id, org.id, user.id)).toEqual(['invoices:pay', 'invoices:read']);
    expect(await organizationsClaim(suite.em(), tenant.id, user.id, 'openid organizations')).toEqual({
      organizations: [{ id: org.id, name: 'Acme', roles: ['billing', 'viewer'] }],
    });
    expect(await organizationsClaim(suite.em(), tenant.id, user.id, 'openid')).toEqual({});

    await organizationMembers.setRoles(suite.scope(tenant, actor), org.id, user.id, ['viewer']);
    expect(await findPermissionsOfMember(suite.em(), tenant.id, org.id, user.id)).toEqual(['invoices:read']);
    await organizationMembers.remove(suite.scope(tenant, actor), org.id, user.id);
    expect(await findPermissionsOfMember(suite.em(), tenant.id, org.id, user.id)).toBeUndefined();
    expect(await organizationMembers.organizationsOf(suite.em(), tenant.id, user.id)).toEqual([]);
    expect((await suite.auditOf(tenant.id, 'OrganizationMemberRemoved'))[0]?.details).toEqual({ userId: user.id, roles: ['viewer'] });
  });

  it('refuses a role outside the template and leaves no membership behind', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const org = await suite.services.organizations.create(suite.scope(tenant, actor), { name: 'Strict' });
    await expect(suite.services.organizationMembers.add(suite.scope(tenant, actor), org.id, user.id, ['owner']))
      .rejects.toMatchObject({ details: { reason: 'unknown_organization_role' } });
    expect(await suite.services.organizationMembers.organizationsOf(suite.em(), tenant.id, user.id)).toEqual([]);
    expect(await suite.auditOf(tenant.id, 'OrganizationMemberAdded')).toEqual([]);
  });

  it('keeps organizations and members within their workspace', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    const org = await suite.services.organizations.create(suite.scope(first.tenant, first.actor), { name: 'Mine' });
    const outsider = await suite.addUser(second.tenant);
    await expect(suite.services.organizationMembers.add(suite.scope(second.tenant, second.actor), org.id, outsider.id, []))
      .rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(suite.services.organizationMembers.add(suite.scope(first.tenant, first.actor), org.id, outsider.id, []))
      .rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('drops a deleted user from the organization\'s permissions', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    await suite.services.organizationRoles.create(suite.scope(tenant, actor), { name: 'viewer', permissions: ['read'] });
    const org = await suite.services.organizations.create(suite.scope(tenant, actor), { name: 'Leavers' });
    await suite.services.organizationMembers.add(suite.scope(tenant, actor), org.id, user.id, ['viewer']);
    await suite.services.accounts.softDelete(suite.scope(tenant, actor), user.id);
    expect(await findPermissionsOfMember(suite.em(), tenant.id, org.id, user.id)).toBeUndefined();
  });
});
