import type { EntityManager } from '@mikro-orm/postgresql';
import { SsoAuthRequestSchema, type SsoAuthRequest, type SsoRequestPurpose } from '../entities/sso.js';

/**
 * The queries of the `sso_auth_request` and `sso_assertion` tables (docs/architecture.md "Rules",
 * data access): the AuthnRequests this service sent, their completion, and the ids of accepted
 * assertions. Each function takes the caller's entity manager; every statement is scoped by tenant id.
 */

/** Inserts a sent request. */
export async function insertSsoAuthRequest(em: EntityManager, request: SsoAuthRequest): Promise<void> {
  await em.insert(SsoAuthRequestSchema, request);
}

/** Deletes the tenant's requests and assertion ids that expired before `before`. */
export async function deleteExpiredSsoRows(em: EntityManager, tenantId: string, before: Date): Promise<void> {
  await em.execute('delete from sso_auth_request where tenant_id = ? and expires_at < ?', [tenantId, before]);
  await em.execute('delete from sso_assertion where tenant_id = ? and expires_at < ?', [tenantId, before]);
}

/**
 * Deletes, in every tenant, the requests and assertion ids that expired before `before` (the
 * retention sweep; a start also deletes its own tenant's).
 * @returns how many rows went.
 */
export async function deleteExpiredSsoRowsEverywhere(em: EntityManager, before: Date): Promise<number> {
  const requests = (await em.execute('delete from sso_auth_request where expires_at < ? returning id', [before])) as unknown[];
  const assertions = (await em.execute('delete from sso_assertion where expires_at < ? returning assertion_id', [before])) as unknown[];
  return requests.length + assertions.length;
}

/** When the connection's open (unanswered, unexpired) request of SAML id `requestId` was sent, or undefined. */
export async function findOpenSsoRequestTime(em: EntityManager, tenantId: string, connectionId: string, requestId: string, now: Date): Promise<Date | undefined> {
  const rows = (await em.execute(
    'select created_at from sso_auth_request where tenant_id = ? and connection_id = ? and request_id = ? and consumed_at is null and expires_at > ?',
    [tenantId, connectionId, requestId, now],
  )) as { created_at: Date }[];
  return rows[0] ? new Date(rows[0].created_at) : undefined;
}

/** The purpose of the connection's request of SAML id `requestId` (answered or not), or undefined. */
export async function findSsoRequestPurpose(em: EntityManager, tenantId: string, connectionId: string, requestId: string): Promise<SsoRequestPurpose | undefined> {
  const rows = (await em.execute(
    'select purpose from sso_auth_request where tenant_id = ? and connection_id = ? and request_id = ?',
    [tenantId, connectionId, requestId],
  )) as { purpose: SsoRequestPurpose }[];
  return rows[0]?.purpose;
}

/**
 * Marks the connection's open request of SAML id `requestId` answered, atomically (a request is
 * answered once, accepted or not).
 * @returns its row id and purpose, or undefined when no such open request exists (any more).
 */
export async function consumeSsoRequest(
  em: EntityManager, tenantId: string, connectionId: string, requestId: string, now: Date,
): Promise<{ id: string; purpose: SsoRequestPurpose; secretsEnc: string | null } | undefined> {
  const rows = (await em.execute(
    `update sso_auth_request set consumed_at = ?
      where tenant_id = ? and connection_id = ? and request_id = ? and consumed_at is null and expires_at > ? returning id, purpose, secrets_enc`,
    [now, tenantId, connectionId, requestId, now],
  )) as { id: string; purpose: SsoRequestPurpose; secrets_enc: string | null }[];
  const row = rows[0];
  return row ? { id: row.id, purpose: row.purpose, secretsEnc: row.secrets_enc } : undefined;
}

/** Stores the verified identity of an answered request and the hash of its completion code. */
export async function setSsoCompletion(
  em: EntityManager, tenantId: string, id: string, completion: { completionHash: string; identityEnc: string; completionExpiresAt: Date },
): Promise<void> {
  await em.nativeUpdate(SsoAuthRequestSchema, { id, tenantId }, completion);
}

/** A request whose completion code was spent. */
export type SpentSsoCompletion = Pick<SsoAuthRequest, 'id' | 'connectionId' | 'browserBindingHash' | 'purpose' | 'returnTo' | 'identityEnc'>;

/**
 * Spends the tenant's unexpired, unspent completion of `completionHash`, atomically.
 * @returns the request, or undefined (unknown, spent, expired, other tenant).
 */
export async function spendSsoCompletion(em: EntityManager, tenantId: string, completionHash: string, now: Date): Promise<SpentSsoCompletion | undefined> {
  const rows = (await em.execute(
    `update sso_auth_request set completed_at = ?
      where tenant_id = ? and completion_hash = ? and completed_at is null and completion_expires_at > ?
      returning id, connection_id, browser_binding_hash, purpose, return_to, identity_enc`,
    [now, tenantId, completionHash, now],
  )) as { id: string; connection_id: string; browser_binding_hash: string; purpose: SsoRequestPurpose; return_to: string | null; identity_enc: string | null }[];
  const row = rows[0];
  return row
    ? {
      id: row.id, connectionId: row.connection_id, browserBindingHash: row.browser_binding_hash, purpose: row.purpose, returnTo: row.return_to,
      identityEnc: row.identity_enc,
    }
    : undefined;
}

/**
 * Records an accepted assertion id until `expiresAt`.
 * @returns false when the connection accepted that id before (a replay).
 */
export async function rememberAssertion(em: EntityManager, tenantId: string, connectionId: string, assertionId: string, expiresAt: Date): Promise<boolean> {
  const rows = (await em.execute(
    'insert into sso_assertion (connection_id, assertion_id, tenant_id, expires_at) values (?, ?, ?, ?) on conflict do nothing returning assertion_id',
    [connectionId, assertionId, tenantId, expiresAt],
  )) as unknown[];
  return rows.length > 0;
}
