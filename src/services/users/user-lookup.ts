import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../../db/rows.js';
import { UserSchema, type User } from '../../entities/user.js';
import { normalizeEmail } from '../../lib/email.js';

/**
 * The one look-up of a user by email: the live (not soft-deleted) user of `tenantId` whose address
 * is `email` after normalisation (trimmed, lower-cased; see docs/decisions.md), or null. Used by
 * sign-in, MFA sign-in, email verification, password reset and the external provider's email match.
 * Plain SQL mapped to a detached value: no query building and no entity-manager fork per call.
 * @param em the request's entity manager or a transaction of it.
 */
export async function findLiveUserByEmail(em: EntityManager, tenantId: string, email: string): Promise<User | null> {
  const rows = await em.execute<Record<string, unknown>[]>(
    'select * from app_user where tenant_id = ? and email = ? and deleted_at is null',
    [tenantId, normalizeEmail(email)],
  );
  return rows[0] ? rowToEntity(em, UserSchema, rows[0]) : null;
}

/**
 * The live (not soft-deleted) user of `tenantId` with this id, or null; the tenant scope is part of
 * the query, so an id of another tenant finds nothing.
 * @param em the request's entity manager or a transaction of it.
 */
export async function findLiveUserById(em: EntityManager, tenantId: string, userId: string): Promise<User | null> {
  const rows = await em.execute<Record<string, unknown>[]>('select * from app_user where id = ? and tenant_id = ? and deleted_at is null', [
    userId,
    tenantId,
  ]);
  return rows[0] ? rowToEntity(em, UserSchema, rows[0]) : null;
}
