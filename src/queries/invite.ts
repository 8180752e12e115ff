import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { InviteSchema, type Invite, type InviteStatus } from '../entities/invite.js';

/**
 * The queries of the `invite` table (docs/architecture.md "Rules", data access). Each function takes
 * the caller's entity manager (pass the transaction when it must run in one; the caller owns it);
 * every statement is scoped by tenant id, but the look-up of a presented token (whose tenant is not
 * known yet) and the claim of the invite it found.
 */

/** Inserts an invite. */
export async function insertInvite(em: EntityManager, invite: Invite): Promise<void> {
  await em.insert(InviteSchema, invite);
}

/** The tenant's invite `id`, or null. */
export async function findInvite(em: EntityManager, tenantId: string, id: string): Promise<Invite | null> {
  return em.findOne(InviteSchema, { id, tenantId }, { disableIdentityMap: true });
}

/** Locks (`FOR UPDATE`) and returns the tenant's invite `id`, or null. Call inside the caller's transaction. */
export async function lockInvite(tx: EntityManager, tenantId: string, id: string): Promise<Invite | null> {
  return tx.findOne(InviteSchema, { id, tenantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, disableIdentityMap: true });
}

/** The invite of any tenant whose token hashes to `tokenHash`, or null. */
export async function findInviteByTokenHash(em: EntityManager, tokenHash: string): Promise<Invite | null> {
  return em.findOne(InviteSchema, { tokenHash }, { disableIdentityMap: true });
}

/** The tenant's invites in one of `statuses`, newest first. */
export async function findInvitesOfTenant(em: EntityManager, tenantId: string, statuses: InviteStatus[]): Promise<Invite[]> {
  return em.find(InviteSchema, { tenantId, status: { $in: statuses } }, { orderBy: { createdAt: 'desc', id: 'desc' }, disableIdentityMap: true });
}

/** Revokes the tenant's open invites to `email`. @returns their ids. */
export async function revokeOpenInvitesTo(em: EntityManager, tenantId: string, email: string, now: Date): Promise<string[]> {
  const superseded = (await em.execute(
    `update invite set status = 'Revoked', revoked_at = ? where tenant_id = ? and email = ? and status = 'Open' returning id`,
    [now, tenantId, email],
  )) as { id: string }[];
  return superseded.map((row) => row.id);
}

/** Revokes one invite of the tenant (the caller checked it is open). */
export async function revokeInvite(em: EntityManager, tenantId: string, id: string, now: Date): Promise<void> {
  await em.nativeUpdate(InviteSchema, { id, tenantId }, { status: 'Revoked', revokedAt: now });
}

/** How many invites the tenant created after `since`, and when the oldest of them was. */
export async function countInvitesSince(em: EntityManager, tenantId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
  const [row] = (await em.execute(
    'select count(*)::int as n, min(created_at) as oldest from invite where tenant_id = ? and created_at > ?',
    [tenantId, since],
  )) as { n: number; oldest: Date | null }[];
  return { count: row?.n ?? 0, oldest: row?.oldest ?? null };
}

/**
 * Marks the tenant's open invites (or only `inviteId`) whose expiry passed by `now` as `Expired`.
 * @returns those that expired now.
 */
export async function expireDueInvites(em: EntityManager, tenantId: string, now: Date, inviteId?: string): Promise<Pick<Invite, 'id' | 'email' | 'expiresAt'>[]> {
  const params: unknown[] = [tenantId, now];
  if (inviteId) params.push(inviteId);
  const rows = (await em.execute(
    `update invite set status = 'Expired' where tenant_id = ? and status = 'Open' and expires_at <= ?
          ${inviteId ? 'and id = ?' : ''} returning id, email, expires_at`,
    params,
  )) as { id: string; email: string; expires_at: Date }[];
  return rows.map((row) => ({ id: row.id, email: row.email, expiresAt: row.expires_at }));
}

/**
 * Claims the open, unexpired invite `id` for `userId` (of two concurrent acceptances, one claims it).
 * @returns false when it was not open any more.
 */
export async function acceptInvite(em: EntityManager, tenantId: string, id: string, userId: string, now: Date): Promise<boolean> {
  const claimed = await em.nativeUpdate(InviteSchema, { id, tenantId, status: 'Open', expiresAt: { $gt: now } }, { status: 'Accepted', acceptedAt: now, acceptedUserId: userId });
  return claimed > 0;
}

/** Deletes the invites that hold an erased user's address: the one they accepted and the closed ones to `email`. */
export async function deleteInvitesOfErasedUser(tx: EntityManager, tenantId: string, userId: string, email: string): Promise<void> {
  await tx.execute(`delete from invite where tenant_id = ? and (accepted_user_id = ? or (email = ? and status <> 'Open'))`, [tenantId, userId, email]);
}
