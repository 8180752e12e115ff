import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findGrantedApplicationsOfAccount, upsertPayload } from '../../src/queries/oidc-payload.js';
import { findMembershipsOfUserForExport } from '../../src/queries/organization-membership.js';
import { countUnusedRecoveryCodes, insertRecoveryCodes } from '../../src/queries/recovery-code.js';
import { findRolesOfUser } from '../../src/queries/user-access-role.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the personal-data export (docs/lifecycle.md "Data export"), DataExportService.exportUser
 * over the per-table queries it reads: organizations with roles, access roles, the recovery-code count
 * and the provider's grants, each scoped by tenant id and user id.
 */

const suite = useServices();

describe('DataExportService.exportUser', () => {
  it('carries the person\'s organizations, access roles, recovery-code count and granted applications, and reads none of them with another tenant\'s id', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    const scope = () => suite.scope(first.tenant, first.actor);
    const user = await suite.addUser(first.tenant);
    const peer = await suite.addUser(first.tenant);
    const { organizations, organizationRoles, organizationMembers, roles, roleAssignments, applications, dataExport } = suite.services;

    await organizationRoles.create(scope(), { name: 'billing', permissions: ['invoices:pay'] });
    const org = await organizations.create(scope(), { name: 'Acme' });
    await organizationMembers.add(scope(), org.id, user.id, ['billing']);
    await organizationMembers.add(scope(), org.id, peer.id, []);
    const role = await roles.create(scope(), { name: 'Support', permissions: [] });
    await roleAssignments.setRolesOfUser(scope(), user.id, [role.id]);
    const hashes = [0, 1, 2].map((n) => `${'ab'.repeat(31)}0${n}`);
    await insertRecoveryCodes(suite.em(), first.tenant.id, user.id, hashes.map((codeHash) => ({ id: randomUUID(), codeHash })), new Date());
    const { application } = await applications.create(scope(), { name: 'Portal', type: 'web', redirectUris: ['https://portal.example.com/cb'] });
    const grantId = `grant-${randomUUID()}`;
    const iat = Math.floor(Date.now() / 1000);
    await upsertPayload(suite.em(), first.tenant.id, 'Grant', grantId, {
      jti: grantId, kind: 'Grant', accountId: user.id, clientId: application.clientId, iat, exp: iat + 3600,
      openid: { scope: 'openid email profile' }, rejected: { openid: { scope: 'profile' } }, resources: { 'https://api.example.com': 'read write' },
    }, 3600);
    // the peer's grant at the same application is the peer's
    await upsertPayload(suite.em(), first.tenant.id, 'Grant', `grant-${randomUUID()}`, { kind: 'Grant', accountId: peer.id, clientId: application.clientId, openid: { scope: 'openid' } }, 3600);

    const data = await dataExport.exportUser(scope(), user.id, 'admin');
    expect(data.organizations).toEqual([{ organizationId: org.id, name: 'Acme', joinedAt: expect.any(String), roles: ['billing'] }]);
    expect(data.accessRoles).toEqual([{ roleId: role.id, name: 'Support', assignedAt: expect.any(String) }]);
    expect(data.mfa.recoveryCodesRemaining).toBe(3);
    expect(data.applicationGrants).toEqual([{
      clientId: application.clientId, applicationName: 'Portal', scopes: ['openid', 'email'],
      resources: [{ resource: 'https://api.example.com', scopes: ['read', 'write'] }],
      grantedAt: new Date(iat * 1000).toISOString(), expiresAt: expect.any(String),
    }]);
    const text = JSON.stringify(data);
    for (const secret of [...hashes, grantId]) expect(text).not.toContain(secret);

    // the user's id with the other tenant's id reads nothing, and the service answers 404
    const em = suite.em();
    expect(await findMembershipsOfUserForExport(em, second.tenant.id, user.id)).toEqual([]);
    expect(await findRolesOfUser(em, second.tenant.id, user.id)).toEqual([]);
    expect(await countUnusedRecoveryCodes(em, second.tenant.id, user.id)).toBe(0);
    expect(await findGrantedApplicationsOfAccount(em, second.tenant.id, user.id)).toEqual([]);
    await expect(dataExport.exportUser(suite.scope(second.tenant, second.actor), user.id, 'admin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
