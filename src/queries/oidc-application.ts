import type { EntityManager } from '@mikro-orm/postgresql';
import { APPLICATION_TYPES, type ApplicationType, type OidcApplication } from '../entities/oidc.js';

/**
 * The queries of the `oidc_application` table (docs/architecture.md "Rules", data access): the
 * applications a tenant registers at its own OpenID Provider. Each function takes the caller's entity
 * manager (pass the transaction when it must run in one; the caller owns it); every statement is
 * scoped by tenant id.
 */

export { APPLICATION_TYPES, type ApplicationType };

/** An application as read (`updated_at` is only written). */
export type OidcApplicationRow = Omit<OidcApplication, 'updatedAt'>;

interface Columns {
  id: string;
  tenant_id: string;
  name: string;
  type: ApplicationType;
  client_id: string;
  client_secret_enc: string | null;
  redirect_uris: string[] | string;
  post_logout_redirect_uris: string[] | string;
  created_at: Date;
}

/** A JSON array column, which the driver may hand back as text. */
const jsonArray = (value: string[] | string): string[] => (typeof value === 'string' ? (JSON.parse(value) as string[]) : value);

function toRow(row: Columns): OidcApplicationRow {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    type: row.type,
    clientId: row.client_id,
    clientSecretEnc: row.client_secret_enc,
    redirectUris: jsonArray(row.redirect_uris),
    postLogoutRedirectUris: jsonArray(row.post_logout_redirect_uris),
    createdAt: row.created_at,
  };
}

/** Inserts an application (`updated_at` = `createdAt`). @returns it as stored. */
export async function insertApplication(em: EntityManager, app: OidcApplicationRow): Promise<OidcApplicationRow> {
  const rows = (await em.execute(
    `insert into oidc_application (id, tenant_id, name, type, client_id, client_secret_enc, redirect_uris, post_logout_redirect_uris, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`,
    [
      app.id, app.tenantId, app.name, app.type, app.clientId, app.clientSecretEnc,
      JSON.stringify(app.redirectUris), JSON.stringify(app.postLogoutRedirectUris), app.createdAt, app.createdAt,
    ],
  )) as Columns[];
  return toRow(rows[0]!);
}

/** The tenant's applications, oldest first. */
export async function findApplicationsOfTenant(em: EntityManager, tenantId: string): Promise<OidcApplicationRow[]> {
  const rows = (await em.execute('select * from oidc_application where tenant_id = ? order by created_at, id', [tenantId])) as Columns[];
  return rows.map(toRow);
}

/** The tenant's application `id` (locked `FOR UPDATE` with `forUpdate`, inside the caller's transaction), or undefined. */
export async function findApplication(em: EntityManager, tenantId: string, id: string, forUpdate = false): Promise<OidcApplicationRow | undefined> {
  const rows = (await em.execute(`select * from oidc_application where id = ? and tenant_id = ?${forUpdate ? ' for update' : ''}`, [id, tenantId])) as Columns[];
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** The tenant's applications among these ids, in no particular order; other tenants' ids find nothing. */
export async function findApplicationsByIds(em: EntityManager, tenantId: string, ids: string[]): Promise<OidcApplicationRow[]> {
  if (ids.length === 0) return [];
  const rows = (await em.execute('select * from oidc_application where tenant_id = ? and id in (?)', [tenantId, ids])) as Columns[];
  return rows.map(toRow);
}

/** The tenant's application with this client id, or undefined. */
export async function findApplicationByClientId(em: EntityManager, tenantId: string, clientId: string): Promise<OidcApplicationRow | undefined> {
  const rows = (await em.execute('select * from oidc_application where tenant_id = ? and client_id = ?', [tenantId, clientId])) as Columns[];
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** Sets name and redirect URIs of the tenant's application. @returns it as stored. */
export async function updateApplication(
  em: EntityManager,
  tenantId: string,
  id: string,
  changes: Pick<OidcApplicationRow, 'name' | 'redirectUris' | 'postLogoutRedirectUris'>,
  now: Date,
): Promise<OidcApplicationRow> {
  const rows = (await em.execute(
    `update oidc_application set name = ?, redirect_uris = ?, post_logout_redirect_uris = ?, updated_at = ?
          where id = ? and tenant_id = ? returning *`,
    [changes.name, JSON.stringify(changes.redirectUris), JSON.stringify(changes.postLogoutRedirectUris), now, id, tenantId],
  )) as Columns[];
  return toRow(rows[0]!);
}

/** Sets the client secret ciphertext of the tenant's application. */
export async function setClientSecret(em: EntityManager, tenantId: string, id: string, clientSecretEnc: string, now: Date): Promise<void> {
  await em.execute('update oidc_application set client_secret_enc = ?, updated_at = ? where id = ? and tenant_id = ?', [clientSecretEnc, now, id, tenantId]);
}

/**
 * Deletes the tenant's application and every provider payload (grants, codes, tokens) of its client
 * id, payloads first.
 */
export async function deleteApplicationAndPayloads(em: EntityManager, tenantId: string, id: string, clientId: string): Promise<void> {
  await em.execute('delete from oidc_payload where tenant_id = ? and client_id = ?', [tenantId, clientId]);
  await em.execute('delete from oidc_application where id = ? and tenant_id = ?', [id, tenantId]);
}

/** The tenant's applications holding a client secret, by id, with its ciphertext (key rotation). */
export async function findApplicationSecrets(em: EntityManager, tenantId: string): Promise<{ id: string; clientSecretEnc: string }[]> {
  const rows = (await em.execute('select id, client_secret_enc from oidc_application where tenant_id = ? and client_secret_enc is not null order by id', [
    tenantId,
  ])) as { id: string; client_secret_enc: string }[];
  return rows.map((row) => ({ id: row.id, clientSecretEnc: row.client_secret_enc }));
}

/** Replaces a client secret ciphertext, conditional on it still being `previous`. @returns false when it changed meanwhile. */
export async function replaceClientSecretCiphertext(em: EntityManager, tenantId: string, id: string, fresh: string, previous: string): Promise<boolean> {
  const updated = await em.execute('update oidc_application set client_secret_enc = ? where id = ? and tenant_id = ? and client_secret_enc = ? returning id', [
    fresh, id, tenantId, previous,
  ]);
  return updated.length > 0;
}
