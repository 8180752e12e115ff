import type { EntityManager } from '@mikro-orm/postgresql';
import type { OidcHostedLogin } from '../entities/oidc.js';

/**
 * The queries of the `oidc_hosted_login` table (docs/architecture.md "Rules", data access): which of
 * a user's hosted sessions signed in to which of the tenant's applications through its OpenID
 * Provider, so ending the session ends the provider's state and the session list shows them
 * (docs/oidc.md "Sessions end everywhere"). Each function takes the caller's entity manager (pass
 * the transaction when it must run in one; the caller owns it); every statement is scoped by tenant id.
 */

/** Records that `sessionId` of a user of the tenant signed in to application `clientId` now. */
export async function recordHostedLogin(em: EntityManager, tenantId: string, userId: string, sessionId: string, clientId: string): Promise<void> {
  await em.execute(
    `insert into oidc_hosted_login (tenant_id, user_id, session_id, client_id, created_at, last_signed_in_at) values (?, ?, ?, ?, now(), now())
         on conflict (tenant_id, user_id, session_id, client_id) do update set last_signed_in_at = now()`,
    [tenantId, userId, sessionId, clientId],
  );
}

/** The distinct hosted sessions of a user of the tenant that signed in at the provider. */
export async function findHostedLoginSessionsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<OidcHostedLogin['sessionId'][]> {
  const rows = (await em.execute('select distinct session_id from oidc_hosted_login where tenant_id = ? and user_id = ?', [tenantId, userId])) as {
    session_id: string;
  }[];
  return rows.map((row) => row.session_id);
}

/** The user whose session `sessionId` of the tenant signed in at the provider, or undefined when it never did. */
export async function findUserOfHostedLoginSession(em: EntityManager, tenantId: string, sessionId: string): Promise<OidcHostedLogin['userId'] | undefined> {
  const rows = (await em.execute('select user_id from oidc_hosted_login where tenant_id = ? and session_id = ? limit 1', [tenantId, sessionId])) as {
    user_id: string;
  }[];
  return rows[0]?.user_id;
}

/** Deletes every record of a user of the tenant (their provider state is gone). */
export async function deleteHostedLoginsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await em.execute('delete from oidc_hosted_login where tenant_id = ? and user_id = ?', [tenantId, userId]);
}

/** One application sign-in of a hosted session, with the application's name (null once it is deleted). */
export interface ApplicationSignInRow {
  sessionId: string;
  clientId: string;
  applicationName: string | null;
  /** When the session first signed in to the application (the row's `created_at`). */
  firstSignedInAt: Date;
  /** When it last did. */
  lastSignedInAt: Date;
}

/**
 * The application sign-ins of every hosted session of a user of the tenant, newest first (ties by
 * client id), in one statement served by the primary key (`tenant_id, user_id, …`): each row's
 * session, client id, application name and first and last sign-in. Rows from before the client id
 * was recorded (`client_id` '') are left out: they name no application. Read by the session list
 * (docs/oidc.md "Sessions end everywhere") and the personal-data export (docs/lifecycle.md "Data
 * export"); empty when there are none.
 */
export async function findApplicationSignInsOfUser(em: EntityManager, tenantId: string, userId: string): Promise<ApplicationSignInRow[]> {
  const rows = (await em.execute(
    `select h.session_id, h.client_id, a.name, h.created_at, h.last_signed_in_at
       from oidc_hosted_login h
       left join oidc_application a on a.tenant_id = h.tenant_id and a.client_id = h.client_id
      where h.tenant_id = ? and h.user_id = ? and h.client_id <> ''
      order by h.last_signed_in_at desc, h.client_id`,
    [tenantId, userId],
  )) as { session_id: string; client_id: string; name: string | null; created_at: Date; last_signed_in_at: Date }[];
  return rows.map((row) => ({
    sessionId: row.session_id, clientId: row.client_id, applicationName: row.name,
    firstSignedInAt: new Date(row.created_at), lastSignedInAt: new Date(row.last_signed_in_at),
  }));
}
