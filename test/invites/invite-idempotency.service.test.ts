import { describe, expect, it, vi } from 'vitest';
import type { ApiError } from '../../src/lib/errors.js';
import { unique } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: invite creation and resending with an `Idempotency-Key` (InviteService.create and
 * resend; docs/api-rules.md "Users and sign-up"): a retry gets the first answer and nothing is created
 * or mailed twice, also when the retry runs alongside the first attempt; the key is free again once
 * its answer expired.
 */

const suite = useServices();
const allowAnyRole = (): void => undefined;

async function inviteRows(tenantId: string, email: string): Promise<{ id: string; status: string }[]> {
  return suite.em().execute('select id, status from invite where tenant_id = ? and email = ? order by created_at', [tenantId, email]);
}

describe('InviteService.create with an idempotency key', () => {
  it('gives a retry the first invite and token, and queues one mail', async () => {
    const { tenant, actor } = await suite.createTenant();
    await suite.takeQueued();
    const email = `retry-${unique()}@example.com`;
    const first = await suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole, 'key-1');
    const again = await suite.services.invites.create(suite.scope(tenant, actor), { email, role: 'Member' }, allowAnyRole, 'key-1');
    expect(again).toEqual(first);
    expect(await inviteRows(tenant.id, email)).toEqual([{ id: first.invite.id, status: 'Open' }]);
    expect((await suite.takeQueued()).mail.map((m) => m.to)).toEqual([email]);
    // the token is kept encrypted, not in plaintext
    const kept = await suite.em().execute<{ answer: string }[]>('select answer from invite_answer where invite_id = ?', [first.invite.id]);
    expect(kept).toHaveLength(1);
    expect(kept[0]!.answer).not.toContain(first.token);
    expect(kept[0]!.answer).not.toContain(email);
  });

  it('creates one invite for two concurrent requests with the same key, and both get its answer', async () => {
    const { tenant, actor } = await suite.createTenant();
    await suite.takeQueued();
    const email = `race-${unique()}@example.com`;
    const answers = await Promise.all([1, 2].map(() => suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole, 'key-race')));
    expect(answers[1]).toEqual(answers[0]);
    expect(await inviteRows(tenant.id, email)).toEqual([{ id: answers[0]!.invite.id, status: 'Open' }]);
    expect((await suite.takeQueued()).mail.map((m) => m.to)).toEqual([email]);
    expect(await suite.auditOf(tenant.id, 'InviteCreated')).toHaveLength(1);
  });

  it('refuses the key with another request (409 idempotency_key_reused), and frees it once the answer expired', async () => {
    const { tenant, actor } = await suite.createTenant();
    const email = `expire-${unique()}@example.com`;
    const first = await suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole, 'key-2');
    const refused = await suite.services.invites.create(suite.scope(tenant, actor), { email, ttlSeconds: 300 }, allowAnyRole, 'key-2')
      .then(() => undefined, (err: ApiError) => err);
    expect(refused).toMatchObject({ code: 'CONFLICT', details: { reason: 'idempotency_key_reused' } });

    await suite.em().execute(`update invite_answer set expires_at = now() - interval '1 second' where tenant_id = ?`, [tenant.id]);
    const later = await suite.services.invites.create(suite.scope(tenant, actor), { email, ttlSeconds: 300 }, allowAnyRole, 'key-2');
    expect(later.invite.id).not.toBe(first.invite.id);
    expect(await inviteRows(tenant.id, email)).toEqual([{ id: first.invite.id, status: 'Revoked' }, { id: later.invite.id, status: 'Open' }]);
    const purged = await suite.services.invites.purgeExpiredAnswers(suite.em(), new Date(Date.now() + 86_400_000 + 60_000));
    expect(purged).toBeGreaterThanOrEqual(1);
    expect(await suite.em().execute('select 1 from invite_answer where tenant_id = ?', [tenant.id])).toEqual([]);
  });
});

describe('InviteService.resend with an idempotency key', () => {
  it('gives a retry the first resend\'s invite and token although that resend revoked the invite, and queues one mail', async () => {
    const { tenant, actor } = await suite.createTenant();
    const email = `resend-${unique()}@example.com`;
    const original = await suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole);
    await suite.takeQueued();
    const first = await suite.services.invites.resend(suite.scope(tenant, actor), original.invite.id, allowAnyRole, 'resend-1');
    const again = await suite.services.invites.resend(suite.scope(tenant, actor), original.invite.id, allowAnyRole, 'resend-1');
    expect(again).toEqual(first);
    expect(await inviteRows(tenant.id, email)).toEqual([{ id: original.invite.id, status: 'Revoked' }, { id: first.invite.id, status: 'Open' }]);
    expect((await suite.takeQueued()).mail.map((m) => m.to)).toEqual([email]);
    expect(await suite.auditOf(tenant.id, 'InviteCreated')).toHaveLength(2);
  });

  it('makes one invite and one mail for two concurrent resends with the same key, and both get its answer', async () => {
    const { tenant, actor } = await suite.createTenant();
    const email = `resend-race-${unique()}@example.com`;
    const original = await suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole);
    await suite.takeQueued();
    const answers = await Promise.all([1, 2].map(() =>
      suite.services.invites.resend(suite.scope(tenant, actor), original.invite.id, allowAnyRole, 'resend-race')));
    expect(answers[1]).toEqual(answers[0]);
    expect(await inviteRows(tenant.id, email)).toEqual([{ id: original.invite.id, status: 'Revoked' }, { id: answers[0]!.invite.id, status: 'Open' }]);
    expect((await suite.takeQueued()).mail.map((m) => m.to)).toEqual([email]);
    expect(await suite.auditOf(tenant.id, 'InviteCreated')).toHaveLength(2);
  });

  it('gives the answer of a resend with the same key that committed between the look for a kept answer and the status check', async () => {
    const { tenant, actor } = await suite.createTenant();
    const email = `resend-late-${unique()}@example.com`;
    const invites = suite.services.invites;
    const original = await invites.create(suite.scope(tenant, actor), { email }, allowAnyRole);
    await suite.takeQueued();
    const expireDue = invites.expireDue.bind(invites);
    let first: Awaited<ReturnType<typeof invites.resend>> | undefined;
    // resend looks for a kept answer, then expires due invites, then checks the invite's status
    const spy = vi.spyOn(invites, 'expireDue').mockImplementationOnce(async (scope, inviteId) => {
      first = await invites.resend(suite.scope(tenant, actor), original.invite.id, allowAnyRole, 'resend-late');
      return expireDue(scope, inviteId);
    });
    try {
      const second = await invites.resend(suite.scope(tenant, actor), original.invite.id, allowAnyRole, 'resend-late');
      expect(first).toBeDefined();
      expect(second).toEqual(first);
    } finally {
      spy.mockRestore();
    }
    expect(await inviteRows(tenant.id, email)).toEqual([{ id: original.invite.id, status: 'Revoked' }, { id: first!.invite.id, status: 'Open' }]);
    expect((await suite.takeQueued()).mail.map((m) => m.to)).toEqual([email]);
  });

  it('checks the credential against the kept invite\'s role before a replay', async () => {
    const { tenant, actor } = await suite.createTenant();
    const original = await suite.services.invites.create(suite.scope(tenant, actor), { email: `resend-role-${unique()}@example.com`, role: 'Admin' }, allowAnyRole);
    await suite.services.invites.resend(suite.scope(tenant, actor), original.invite.id, allowAnyRole, 'resend-role');
    const seen: string[] = [];
    const refuseAdmin = (role: string): void => {
      seen.push(role);
      if (role === 'Admin') throw new Error('refused');
    };
    await expect(suite.services.invites.resend(suite.scope(tenant, actor), original.invite.id, refuseAdmin, 'resend-role')).rejects.toThrow('refused');
    expect(seen).toEqual(['Admin']);
  });
});

describe('InviteService.resend without a key', () => {
  it('sends once for two concurrent resends of one invite: the second finds it superseded (409 invite_not_open) and leaves nothing behind', async () => {
    const { tenant, actor } = await suite.createTenant();
    const email = `resend-twice-${unique()}@example.com`;
    const original = await suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole);
    await suite.takeQueued();
    const outcomes = await Promise.allSettled([1, 2].map(() => suite.services.invites.resend(suite.scope(tenant, actor), original.invite.id, allowAnyRole)));
    const sent = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as ApiError] : []));
    expect(sent).toHaveLength(1);
    expect(refused).toEqual([expect.objectContaining({ code: 'CONFLICT', message: 'The invite is revoked and cannot be sent again', details: { reason: 'invite_not_open' } })]);
    expect(await inviteRows(tenant.id, email)).toEqual([{ id: original.invite.id, status: 'Revoked' }, { id: sent[0]!.invite.id, status: 'Open' }]);
    expect((await suite.takeQueued()).mail.map((m) => m.to)).toEqual([email]);
    expect(await suite.auditOf(tenant.id, 'InviteCreated')).toHaveLength(2);
  });
});
