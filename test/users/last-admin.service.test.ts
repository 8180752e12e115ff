import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import { ApiError } from '../../src/lib/errors.js';
import { findLiveUsers } from '../../src/queries/user.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the last-admin lock of UserAdministrationService.change and UserAccountService.softDelete
 * (docs/api-rules.md "Users and sign-up"). Two concurrent calls that would each leave one active
 * Admin: exactly one commits, the other answers 409 `last_admin`, and one active Admin remains.
 */

const suite = useServices();

/** The settled outcomes: how many calls succeeded, and the reasons of those that failed. */
function outcomes(results: PromiseSettledResult<unknown>[]): { fulfilled: number; reasons: unknown[] } {
  const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  return {
    fulfilled: results.length - rejected.length,
    reasons: rejected.map((r) => (r.reason instanceof ApiError ? `${r.reason.code}:${String(r.reason.details.reason)}` : r.reason)),
  };
}

async function activeAdmins(tenant: Tenant): Promise<string[]> {
  const users = await findLiveUsers(suite.em(), tenant.id, { role: 'Admin', status: 'Active' });
  return users.map((u) => u.id);
}

describe('the last-admin lock', () => {
  it('lets one of two concurrent demotions of the last two Admins through', async () => {
    const { tenant, admin, actor } = await suite.createTenant();
    const second = await suite.addUser(tenant, { role: 'Admin' });
    const { userAdministration } = suite.services;
    const results = await Promise.allSettled([
      userAdministration.change(suite.scope(tenant, actor), admin.id, { role: 'Member' }),
      userAdministration.change(suite.scope(tenant, actor), second.id, { role: 'Member' }),
    ]);
    expect(outcomes(results)).toEqual({ fulfilled: 1, reasons: ['CONFLICT:last_admin'] });
    const remaining = await activeAdmins(tenant);
    expect(remaining).toHaveLength(1);
    expect([admin.id, second.id]).toContain(remaining[0]);
    expect(await suite.auditOf(tenant.id, 'UserRoleChanged')).toHaveLength(1);
  });

  it('lets one of two concurrent deletions of the last two Admins through', async () => {
    const { tenant, admin, actor } = await suite.createTenant();
    const second = await suite.addUser(tenant, { role: 'Admin' });
    const { accounts } = suite.services;
    const results = await Promise.allSettled([
      accounts.softDelete(suite.scope(tenant, actor), admin.id),
      accounts.softDelete(suite.scope(tenant, actor), second.id),
    ]);
    expect(outcomes(results)).toEqual({ fulfilled: 1, reasons: ['CONFLICT:last_admin'] });
    expect(await activeAdmins(tenant)).toHaveLength(1);
    expect(await suite.auditOf(tenant.id, 'UserSoftDeleted')).toHaveLength(1);
  });

  it('lets one of a concurrent suspension and deletion of the last two Admins through', async () => {
    const { tenant, admin, actor } = await suite.createTenant();
    const second = await suite.addUser(tenant, { role: 'Admin' });
    const results = await Promise.allSettled([
      suite.services.userAdministration.change(suite.scope(tenant, actor), admin.id, { status: 'Suspended' }),
      suite.services.accounts.softDelete(suite.scope(tenant, actor), second.id),
    ]);
    expect(outcomes(results)).toEqual({ fulfilled: 1, reasons: ['CONFLICT:last_admin'] });
    expect(await activeAdmins(tenant)).toHaveLength(1);
  });

  it('lets both through when a third active Admin remains, and never takes a Member for an Admin', async () => {
    const { tenant, admin, actor } = await suite.createTenant();
    const second = await suite.addUser(tenant, { role: 'Admin' });
    const third = await suite.addUser(tenant, { role: 'Admin' });
    await suite.addUser(tenant, { role: 'Member' });
    const results = await Promise.allSettled([
      suite.services.userAdministration.change(suite.scope(tenant, actor), admin.id, { role: 'Member' }),
      suite.services.accounts.softDelete(suite.scope(tenant, actor), second.id),
    ]);
    expect(outcomes(results)).toEqual({ fulfilled: 2, reasons: [] });
    expect(await activeAdmins(tenant)).toEqual([third.id]);
    await expect(suite.services.userAdministration.change(suite.scope(tenant, actor), third.id, { role: 'Member' }))
      .rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'last_admin' } });
  });
});
