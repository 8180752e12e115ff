import type { EntityManager } from '@mikro-orm/postgresql';
import { UserSchema, type User } from '../../entities/user.js';
import { queryPooled } from '../../db/pooled-query.js';

/** Columns the tenant + session query adds beside the tenant's own (no tenant column starts with `cred_`). */
export const SESSION_FOUND = 'cred_session_found';
export const SESSION_REVOKED_AT = 'cred_session_revoked_at';
export const USER_COLUMN_PREFIX = 'cred_user__';

/** The statement text per ORM metadata (the user columns are listed once, from the entity). */
const statements = new WeakMap<object, string>();

function tenantWithSessionStatement(em: EntityManager): string {
  const metadata = em.getMetadata();
  let text = statements.get(metadata);
  if (!text) {
    const userColumns = metadata
      .get<User>(UserSchema.meta.className)
      .props.flatMap((p) => p.fieldNames ?? [])
      .map((column) => `u.${column} as ${USER_COLUMN_PREFIX}${column}`)
      .join(', ');
    text = `select t.*, s.id is not null as ${SESSION_FOUND}, s.revoked_at as ${SESSION_REVOKED_AT}, ${userColumns}
              from tenant t
              left join session s on s.id = $1 and s.tenant_id = t.id and s.user_id = $2
              left join app_user u on u.id = s.user_id
             where t.slug = $3 and t.deleted_at is null`;
    statements.set(metadata, text);
  }
  return text;
}

/**
 * The one query of an authenticated request (docs/architecture.md, "GET me"): the live tenant of
 * `slug`, with the session `sessionId` of user `userId` in that tenant and the user's columns
 * (prefixed {@link USER_COLUMN_PREFIX}) when such a session exists. Sent to `pg` directly on a pooled
 * connection (see queryPooled): it runs on every authenticated request.
 * @returns the row, or undefined for an unknown or deleted tenant.
 */
export async function findTenantWithSession(
  em: EntityManager,
  slug: string,
  sessionId: string,
  userId: string,
): Promise<Record<string, unknown> | undefined> {
  const rows = await queryPooled<Record<string, unknown>>(em, tenantWithSessionStatement(em), [sessionId, userId, slug]);
  return rows[0];
}
