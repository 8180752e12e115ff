import type { EntityManager } from '@mikro-orm/postgresql';
import type { OidcHostedLogin } from '../../entities/oidc.js';

/**
 * The queries of the `oidc_hosted_login` table (docs/architecture.md "Rules", data access): which of
 * a user's sessions signed in at the tenant's own OpenID Provider, so its logout ends them. Each
 * function takes the caller's entity manager (pass the transaction when it must run in one; the
 * caller owns it); every statement is scoped by tenant id.
 */

/** Records that `sessionId` of a user of the tenant signed in at the provider (once). */
export async function recordHostedLogin(em: EntityManager, tenantId: string, userId: string, sessionId: string): Promise<void> {
  await em.execute(
    `insert into oidc_hosted_login (tenant_id, user_id, session_id, created_at) values (?, ?, ?, now())
         on conflict (tenant_id, user_id, session_id) do nothing`,
    [tenantId, userId, sessionId],
  );
}

/** Deletes a user's records of the tenant. @returns the session ids they named. */
export async function deleteHostedLoginsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<OidcHostedLogin['sessionId'][]> {
  const rows = (await em.execute('delete from oidc_hosted_login where tenant_id = ? and user_id = ? returning session_id', [tenantId, userId])) as {
    session_id: string;
  }[];
  return rows.map((row) => row.session_id);
}
