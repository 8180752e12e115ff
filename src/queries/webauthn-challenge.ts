import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebauthnChallenge } from '../entities/webauthn-challenge.js';

/**
 * The queries of the `webauthn_challenge` table (docs/architecture.md "Rules", data access): open
 * passkey ceremonies, stored as SHA-256 hashes, spent (deleted) as they are presented. Each function
 * takes the caller's entity manager (pass the transaction when it must run in one; the caller owns
 * it); every statement is scoped by tenant id.
 */

/** A spent challenge, as the verification needs it. */
export type SpentChallenge = Pick<WebauthnChallenge, 'userId' | 'userBound' | 'challengeHash' | 'expiresAt'>;

interface SpentColumns {
  user_id: string | null;
  user_bound: boolean;
  challenge_hash: string;
  expires_at: Date;
}

const toSpent = (row: SpentColumns): SpentChallenge => ({ userId: row.user_id, userBound: row.user_bound, challengeHash: row.challenge_hash, expiresAt: row.expires_at });

/** Deletes the tenant's challenges that expired before `now`. */
export async function deleteExpiredChallenges(em: EntityManager, tenantId: string, now: Date): Promise<void> {
  await em.execute('delete from webauthn_challenge where tenant_id = ? and expires_at < ?', [tenantId, now]);
}

/** Inserts a challenge. */
export async function insertChallenge(em: EntityManager, challenge: WebauthnChallenge): Promise<void> {
  await em.execute(
    `insert into webauthn_challenge (id, tenant_id, user_id, purpose, user_bound, challenge_hash, created_at, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      challenge.id, challenge.tenantId, challenge.userId, challenge.purpose, challenge.userBound, challenge.challengeHash, challenge.createdAt,
      challenge.expiresAt,
    ],
  );
}

/** Deletes the open registration challenges of a user of the tenant. */
export async function deleteRegistrationChallenges(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute("delete from webauthn_challenge where tenant_id = ? and user_id = ? and purpose = 'registration'", [tenantId, userId]);
}

/** Spends (deletes) the open registration challenges of a user of the tenant. @returns them, expired ones included. */
export async function spendRegistrationChallenges(em: EntityManager, tenantId: string, userId: string): Promise<SpentChallenge[]> {
  const rows = (await em.execute(
    "delete from webauthn_challenge where tenant_id = ? and user_id = ? and purpose = 'registration' returning user_id, user_bound, challenge_hash, expires_at",
    [tenantId, userId],
  )) as SpentColumns[];
  return rows.map(toSpent);
}

/** Spends (deletes) the tenant's authentication challenge `challengeId`. @returns it (maybe expired), or undefined. */
export async function spendAuthenticationChallenge(em: EntityManager, tenantId: string, challengeId: string): Promise<SpentChallenge | undefined> {
  const rows = (await em.execute(
    "delete from webauthn_challenge where id = ? and tenant_id = ? and purpose = 'authentication' returning user_id, user_bound, challenge_hash, expires_at",
    [challengeId, tenantId],
  )) as SpentColumns[];
  return rows[0] ? toSpent(rows[0]) : undefined;
}

/** Deletes every open challenge of a user of the tenant. */
export async function deleteChallengesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute('delete from webauthn_challenge where user_id = ? and tenant_id = ?', [userId, tenantId]);
}
