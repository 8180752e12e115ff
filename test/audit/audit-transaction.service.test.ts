import { describe, expect, it } from 'vitest';
import { useServices } from '../helpers/services.js';
import { systemScope } from '../../src/lib/request-scope.js';

/**
 * Below HTTP: AuditService.record writes in the caller's transaction (docs/audit.md,
 * docs/architecture.md "Side effects in sight"): committed with the change, rolled back with it.
 */

const suite = useServices();

describe('AuditService.record', () => {
  it('commits with the caller\'s transaction and rolls back with it', async () => {
    const { tenant, admin, actor } = await suite.createTenant();
    const event = { action: 'UserUnlocked' as const, target: { type: 'user', id: admin.id } };

    await expect(suite.em().transactional(async (tx) => {
      await suite.services.audit.record({ em: tx, tenant, actor, meta: suite.meta }, { ...event, details: { attempt: 'rolled back' } });
      throw new Error('the change failed after its audit event');
    })).rejects.toThrow('the change failed');
    expect(await suite.auditOf(tenant.id, 'UserUnlocked')).toEqual([]);

    await suite.em().transactional(async (tx) => {
      await suite.services.audit.record({ em: tx, tenant, actor, meta: suite.meta }, { ...event, details: { attempt: 'committed' } });
    });
    const events = await suite.auditOf(tenant.id, 'UserUnlocked');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actorType: 'user', actorId: admin.id, targetId: admin.id, ip: suite.meta.ip, userAgent: 'vitest', details: { attempt: 'committed' } });
  });

  it('rolls back a service\'s own audit event with its change: a refused suspension leaves nothing', async () => {
    const { tenant, admin, actor } = await suite.createTenant();
    const member = await suite.addUser(tenant);
    // last_admin is thrown inside the transaction, after the admins are locked
    await expect(suite.services.userAdministration.change(suite.scope(tenant, actor), admin.id, { status: 'Suspended' }))
      .rejects.toMatchObject({ details: { reason: 'last_admin' } });
    expect(await suite.auditOf(tenant.id, 'UserSuspended')).toEqual([]);
    await suite.services.userAdministration.change(suite.scope(tenant, actor), member.id, { status: 'Suspended' });
    expect((await suite.auditOf(tenant.id, 'UserSuspended')).map((e) => e.targetId)).toEqual([member.id]);
  });

  it('fails the operation when the event cannot be written (unknown tenant)', async () => {
    await expect(suite.services.audit.record(systemScope(suite.em(), '00000000-0000-4000-8000-000000000000'), { action: 'UserUnlocked' }))
      .rejects.toThrow();
  });

  it('keeps each workspace\'s events to itself', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    expect((await suite.auditOf(first.tenant.id, 'TenantCreated')).map((e) => e.targetId)).toEqual([first.tenant.id]);
    expect((await suite.auditOf(second.tenant.id, 'TenantCreated')).map((e) => e.targetId)).toEqual([second.tenant.id]);
  });
});
