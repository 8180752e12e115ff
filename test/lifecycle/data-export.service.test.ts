import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { insertIdentity } from '../../src/queries/idp-identity.js';
import { findApplicationSignInsOfUser, recordHostedLogin } from '../../src/queries/oidc-hosted-login.js';
import { findGrantedApplicationsOfAccount, GRANT_ORGANIZATION_MODEL, upsertPayload } from '../../src/queries/oidc-payload.js';
import { findMembershipsOfUserForExport } from '../../src/queries/organization-membership.js';
import { insertPasskey } from '../../src/queries/passkey.js';
import { countUnusedRecoveryCodes, insertRecoveryCodes } from '../../src/queries/recovery-code.js';
import { insertSessionWithFirstToken } from '../../src/queries/session.js';
import { findRolesOfUser } from '../../src/queries/user-access-role.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the personal-data export (docs/lifecycle.md "Data export"), DataExportService.exportUser
 * over the per-table queries it reads: organizations with roles, access roles, the recovery-code count,
 * the provider's grants with the picked organization and the applications each session signed in to,
 * each scoped by tenant id and user id.
 */

const suite = useServices();

/** Stores a session of `userId` directly (the sign-in routes are another feature's); @returns its id. */
async function sessionOf(tenantId: string, userId: string): Promise<string> {
  const id = randomUUID();
  await insertSessionWithFirstToken(suite.em(), {
    id, tenantId, userId, ip: null, userAgent: null, method: 'password', now: new Date(),
    firstToken: { id: randomUUID(), tokenHash: randomUUID().replaceAll('-', ''), expiresAt: new Date(Date.now() + 3_600_000) },
  });
  return id;
}

describe('DataExportService.exportUser', () => {
  it('carries the person\'s organizations, access roles, recovery-code count, granted applications with the picked organization and each session\'s application sign-ins, and reads none of them with another tenant\'s id', async () => {
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
    await upsertPayload(suite.em(), first.tenant.id, GRANT_ORGANIZATION_MODEL, grantId, { grantId, accountId: user.id, clientId: application.clientId, organizationId: org.id }, 3600);
    // the peer's grant at the same application, and the organization picked for it, are the peer's
    const peerGrantId = `grant-${randomUUID()}`;
    const peerOrg = await organizations.create(scope(), { name: 'Peer Org' });
    await upsertPayload(suite.em(), first.tenant.id, 'Grant', peerGrantId, { kind: 'Grant', accountId: peer.id, clientId: application.clientId, openid: { scope: 'openid' } }, 3600);
    await upsertPayload(suite.em(), first.tenant.id, GRANT_ORGANIZATION_MODEL, peerGrantId, { grantId: peerGrantId, accountId: peer.id, clientId: application.clientId, organizationId: peerOrg.id }, 3600);
    // the user's session signed in to Portal, then to an application since deleted; the peer's to Portal
    const sessionId = await sessionOf(first.tenant.id, user.id);
    const quietSessionId = await sessionOf(first.tenant.id, user.id);
    const peerSessionId = await sessionOf(first.tenant.id, peer.id);
    await recordHostedLogin(suite.em(), first.tenant.id, user.id, sessionId, application.clientId);
    await recordHostedLogin(suite.em(), first.tenant.id, user.id, sessionId, 'deleted-application');
    await recordHostedLogin(suite.em(), first.tenant.id, peer.id, peerSessionId, application.clientId);

    // a provider link and two passkeys, so every list section of the export holds something
    await insertIdentity(suite.em(), {
      id: randomUUID(), tenantId: first.tenant.id, userId: user.id, issuer: 'https://idp.example.com', subject: `sub-${randomUUID()}`,
      email: user.email, createdAt: new Date(), lastLoginAt: null,
    });
    for (const name of ['Laptop', 'Phone']) {
      await insertPasskey(suite.em(), {
        id: randomUUID(), tenantId: first.tenant.id, userId: user.id, credentialId: randomUUID(), publicKey: Buffer.from('not a real key'),
        counter: '0', transports: ['internal'], backupEligible: false, backedUp: false, aaguid: '00000000-0000-0000-0000-000000000000', name, createdAt: new Date(),
      });
    }

    const data = await dataExport.exportUser(scope(), user.id, 'admin');
    // GdprExportCompleted counts every list section (docs/lifecycle.md "Data export")
    const [completed] = await suite.auditOf(first.tenant.id, 'GdprExportCompleted');
    expect(completed!.details).toEqual({
      requestedBy: 'admin', sessions: 2, idpLinks: 1, passkeys: 2, organizations: 1, accessRoles: 1, applicationGrants: 1, auditEvents: data.auditEvents.length,
    });
    expect(data.auditEvents.length).toBeGreaterThan(0);
    expect(data.organizations).toEqual([{ organizationId: org.id, name: 'Acme', joinedAt: expect.any(String), roles: ['billing'] }]);
    expect(data.accessRoles).toEqual([{ roleId: role.id, name: 'Support', assignedAt: expect.any(String) }]);
    expect(data.mfa.recoveryCodesRemaining).toBe(3);
    expect(data.applicationGrants).toEqual([{
      clientId: application.clientId, applicationName: 'Portal', scopes: ['openid', 'email'],
      resources: [{ resource: 'https://api.example.com', scopes: ['read', 'write'] }],
      grantedAt: new Date(iat * 1000).toISOString(), expiresAt: expect.any(String), selectedOrganizationId: org.id,
    }]);
    const signIn = { firstSignedInAt: expect.any(String), lastSignedInAt: expect.any(String) };
    expect(data.sessions.map((s) => [s.id, s.applications])).toEqual([
      [sessionId, [{ clientId: 'deleted-application', applicationName: null, ...signIn }, { clientId: application.clientId, applicationName: 'Portal', ...signIn }]],
      [quietSessionId, []],
    ]);
    for (const { firstSignedInAt, lastSignedInAt } of data.sessions[0]!.applications) expect(firstSignedInAt <= lastSignedInAt).toBe(true);
    const text = JSON.stringify(data);
    for (const secret of [...hashes, grantId]) expect(text).not.toContain(secret);
    for (const peers of [peerOrg.id, peerSessionId]) expect(text).not.toContain(peers);

    // the user's id with the other tenant's id reads nothing, and the service answers 404
    const em = suite.em();
    expect(await findMembershipsOfUserForExport(em, second.tenant.id, user.id)).toEqual([]);
    expect(await findRolesOfUser(em, second.tenant.id, user.id)).toEqual([]);
    expect(await countUnusedRecoveryCodes(em, second.tenant.id, user.id)).toBe(0);
    expect(await findGrantedApplicationsOfAccount(em, second.tenant.id, user.id)).toEqual([]);
    expect(await findApplicationSignInsOfUser(em, second.tenant.id, user.id)).toEqual([]);
    await expect(dataExport.exportUser(suite.scope(second.tenant, second.actor), user.id, 'admin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
