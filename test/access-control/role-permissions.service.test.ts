import { describe, expect, it } from 'vitest';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the tenant's own roles and what they grant (docs/oidc.md "Roles and permissions"):
 * RoleService, RoleAssignmentService.setRolesOfUser and grantFor, the permission resolution of
 * every token for an API resource.
 */

const suite = useServices();

describe('role assignment and permission resolution', () => {
  it('grants a user the union of the permissions of their roles for the named resource, and follows a change at once', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const identifier = `https://api-${tenant.slug}.example.com`;
    const { apiResources, roles, roleAssignments } = suite.services;
    await apiResources.create(suite.scope(tenant, actor), {
      name: 'Orders', identifier, permissions: [{ name: 'orders:read' }, { name: 'orders:write' }, { name: 'orders:delete' }],
    });
    const reader = await roles.create(suite.scope(tenant, actor), { name: 'reader', permissions: [{ resource: identifier, permission: 'orders:read' }] });
    const writer = await roles.create(suite.scope(tenant, actor), {
      name: 'writer', permissions: [{ resource: identifier, permission: 'orders:read' }, { resource: identifier, permission: 'orders:write' }],
    });

    expect((await roleAssignments.grantFor(suite.em(), tenant.id, identifier, { userId: user.id }))?.permissions).toEqual([]);
    await roleAssignments.setRolesOfUser(suite.scope(tenant, actor), user.id, [reader.id, writer.id]);
    const grant = await roleAssignments.grantFor(suite.em(), tenant.id, identifier, { userId: user.id });
    expect(grant?.identifier).toBe(identifier);
    expect([...grant!.permissions].sort()).toEqual(['orders:read', 'orders:write']);
    expect(await roleAssignments.grantFor(suite.em(), tenant.id, identifier, { userId: user.id }, ['orders:write', 'orders:delete']))
      .toMatchObject({ permissions: ['orders:write'] });
    expect((await roleAssignments.roleNamesOfUser(suite.em(), tenant.id, user.id)).sort()).toEqual(['reader', 'writer']);

    await roleAssignments.setRolesOfUser(suite.scope(tenant, actor), user.id, [reader.id]);
    expect((await roleAssignments.grantFor(suite.em(), tenant.id, identifier, { userId: user.id }))?.permissions).toEqual(['orders:read']);
    const changes = await suite.auditOf(tenant.id, 'UserRolesChanged');
    expect(changes[0]?.details).toMatchObject({ roles: ['reader'], added: [], removed: ['writer'] });
  });

  it('refuses another workspace\'s role and resource: unknown_role, and no grant for a foreign identifier', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    const identifier = `https://api-${first.tenant.slug}.example.com`;
    await suite.services.apiResources.create(suite.scope(first.tenant, first.actor), { name: 'A', identifier, permissions: [{ name: 'a' }] });
    const role = await suite.services.roles.create(suite.scope(first.tenant, first.actor), { name: 'a-role', permissions: [{ resource: identifier, permission: 'a' }] });
    const outsider = await suite.addUser(second.tenant);
    await expect(suite.services.roleAssignments.setRolesOfUser(suite.scope(second.tenant, second.actor), outsider.id, [role.id]))
      .rejects.toMatchObject({ details: { reason: 'unknown_role' } });
    expect(await suite.services.roleAssignments.grantFor(suite.em(), second.tenant.id, identifier, { userId: outsider.id })).toBeUndefined();
    await expect(suite.services.roles.create(suite.scope(second.tenant, second.actor), { name: 'b', permissions: [{ resource: identifier, permission: 'a' }] }))
      .rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('drops a deleted role\'s permissions from the next grant', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const identifier = `https://billing-${tenant.slug}.example.com`;
    await suite.services.apiResources.create(suite.scope(tenant, actor), { name: 'Billing', identifier, permissions: [{ name: 'invoices:read' }] });
    const role = await suite.services.roles.create(suite.scope(tenant, actor), { name: 'billing', permissions: [{ resource: identifier, permission: 'invoices:read' }] });
    await suite.services.roleAssignments.setRolesOfUser(suite.scope(tenant, actor), user.id, [role.id]);
    expect((await suite.services.roleAssignments.grantFor(suite.em(), tenant.id, identifier, { userId: user.id }))?.permissions).toEqual(['invoices:read']);
    await suite.services.roles.delete(suite.scope(tenant, actor), role.id);
    expect((await suite.services.roleAssignments.grantFor(suite.em(), tenant.id, identifier, { userId: user.id }))?.permissions).toEqual([]);
    expect(await suite.services.roleAssignments.rolesOfUser(suite.em(), tenant.id, user.id)).toEqual([]);
  });
});
