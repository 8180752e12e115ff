import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/lib/errors.js';
import { findLiveUserByEmail } from '../../src/queries/user.js';
import { PASSWORD, unique } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: an invite's one-time link (InviteService; docs/decisions.md "Invites"): mailed in the
 * invite's transaction, accepted once even by two concurrent acceptances, superseded by a newer one.
 */

const suite = useServices();
const allowAnyRole = (): void => undefined;

describe('InviteService', () => {
  it('mails the link with the token, and accepts it exactly once under two concurrent acceptances', async () => {
    const { tenant, actor } = await suite.createTenant();
    await suite.takeQueued();
    const email = `invitee-${unique()}@example.com`;
    const { invite, token } = await suite.services.invites.create(suite.scope(tenant, actor), { email, role: 'Admin' }, allowAnyRole);
    const { mail } = await suite.takeQueued();
    expect(mail.map((m) => m.to)).toEqual([email]);
    expect(mail[0]?.text).toContain(`accept-invite?token=${encodeURIComponent(token)}`);

    const results = await Promise.allSettled([
      suite.services.invites.accept(suite.em(), token, PASSWORD, suite.meta),
      suite.services.invites.accept(suite.em(), token, PASSWORD, suite.meta),
    ]);
    const accepted = results.filter((r) => r.status === 'fulfilled');
    expect(accepted).toHaveLength(1);
    const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason as ApiError;
    expect(refused.details.reason).toBe('invite_invalid');

    const user = await findLiveUserByEmail(suite.em(), tenant.id, email);
    expect(user).toMatchObject({ role: 'Admin', status: 'Active' });
    expect(user!.emailVerifiedAt).not.toBeNull();
    expect((await suite.auditOf(tenant.id, 'InviteAccepted')).map((e) => e.targetId)).toEqual([invite.id]);
    await expect(suite.services.invites.accept(suite.em(), token, PASSWORD, suite.meta)).rejects.toMatchObject({ details: { reason: 'invite_invalid' } });
  });

  it('revokes the earlier link when the same address is invited again', async () => {
    const { tenant, actor } = await suite.createTenant();
    const email = `twice-${unique()}@example.com`;
    const first = await suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole);
    const second = await suite.services.invites.create(suite.scope(tenant, actor), { email }, allowAnyRole);
    await expect(suite.services.invites.accept(suite.em(), first.token, PASSWORD, suite.meta)).rejects.toMatchObject({ details: { reason: 'invite_invalid' } });
    const { user } = await suite.services.invites.accept(suite.em(), second.token, PASSWORD, suite.meta);
    expect(user).toMatchObject({ email, role: 'Member' });
    expect((await suite.auditOf(tenant.id, 'InviteRevoked')).map((e) => [e.targetId, e.details.reason])).toEqual([[first.invite.id, 'superseded']]);
  });

  it('refuses to invite the address of a live user (email_taken), and nothing is mailed', async () => {
    const { tenant, actor } = await suite.createTenant();
    const member = await suite.addUser(tenant);
    await suite.takeQueued();
    await expect(suite.services.invites.create(suite.scope(tenant, actor), { email: member.email }, allowAnyRole))
      .rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'email_taken' } });
    expect((await suite.takeQueued()).mail).toEqual([]);
  });
});
