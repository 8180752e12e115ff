import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditAction } from '../entities/audit-event.js';
import type { WebhookEndpoint } from '../entities/webhook.js';

/**
 * The queries of the `webhook_endpoint` table (docs/architecture.md "Rules", data access; docs/events.md
 * "Webhooks"). Each function takes the caller's entity manager (pass the transaction when it must
 * run in one; the caller owns it); every statement is scoped by tenant id but the success mark of a
 * delivery, which names the endpoint the delivery job read tenant-scoped. Timestamps may come back
 * as `Date` or as text depending on the driver's type parsing.
 */

/** Timestamps of a row read in plain SQL, which may come back as `Date` or as text. */
type Read<T, K extends keyof T> = Omit<T, K> & { [P in K]: T[P] extends Date ? Date | string : Date | string | null };

/** An endpoint as the API shows it (no secret). */
export type WebhookEndpointRow = Read<
  Pick<WebhookEndpoint, 'id' | 'url' | 'eventTypes' | 'enabled' | 'disabledReason' | 'failingSince' | 'createdAt' | 'updatedAt'>,
  'failingSince' | 'createdAt' | 'updatedAt'
>;

interface Columns {
  id: string;
  url: string;
  event_types: AuditAction[] | string | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const ENDPOINT_COLUMNS = 'id, url, event_types, enabled, disabled_reason, failing_since, created_at, updated_at';

function toRow(row: Columns): WebhookEndpointRow {
  return {
    id: row.id,
    url: row.url,
    eventTypes: typeof row.event_types === 'string' ? (JSON.parse(row.event_types) as AuditAction[]) : row.event_types,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Inserts an enabled endpoint (created now). @returns it as stored. */
export async function insertEndpoint(
  em: EntityManager,
  endpoint: { id: string; tenantId: string; url: string; eventTypes: AuditAction[] | null; secretEncrypted: string },
): Promise<WebhookEndpointRow> {
  const inserted = await em.execute<Columns[]>(
    `insert into webhook_endpoint (id, tenant_id, url, event_types, enabled, secret_encrypted, created_at, updated_at)
         values (?, ?, ?, ?::jsonb, true, ?, now(), now()) returning ${ENDPOINT_COLUMNS}`,
    [endpoint.id, endpoint.tenantId, endpoint.url, endpoint.eventTypes ? JSON.stringify(endpoint.eventTypes) : null, endpoint.secretEncrypted],
  );
  return toRow(inserted[0]!);
}

/** The tenant's endpoints, oldest first. */
export async function findEndpointsOfTenant(em: EntityManager, tenantId: string): Promise<WebhookEndpointRow[]> {
  const rows = await em.execute<Columns[]>(`select ${ENDPOINT_COLUMNS} from webhook_endpoint where tenant_id = ? order by created_at, id`, [tenantId]);
  return rows.map(toRow);
}

/** The tenant's endpoint `id`, or undefined. */
export async function findEndpoint(em: EntityManager, tenantId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await em.execute<Columns[]>(`select ${ENDPOINT_COLUMNS} from webhook_endpoint where id = ? and tenant_id = ?`, [id, tenantId]);
  return row ? toRow(row) : undefined;
}

/**
 * Sets URL, event types and `enabled` of the tenant's endpoint; `reenabled` (the change turns it on)
 * also clears its disabled reason and failing mark.
 * @returns it as stored, or undefined when there is no such endpoint.
 */
export async function updateEndpoint(
  em: EntityManager,
  tenantId: string,
  id: string,
  next: { url: string; eventTypes: AuditAction[] | null; enabled: boolean },
  reenabled: boolean,
): Promise<WebhookEndpointRow | undefined> {
  const rows = await em.execute<Columns[]>(
    `update webhook_endpoint set url = ?, event_types = ?::jsonb, enabled = ?, updated_at = now(),
           disabled_reason = case when ? then null else disabled_reason end,
           failing_since = case when ? then null else failing_since end
         where id = ? and tenant_id = ? returning ${ENDPOINT_COLUMNS}`,
    [next.url, next.eventTypes ? JSON.stringify(next.eventTypes) : null, next.enabled, reenabled, reenabled, id, tenantId],
  );
  return rows[0] ? toRow(rows[0]) : undefined;
}

/** Deletes the tenant's endpoint. @returns false when there was none. */
export async function deleteEndpoint(em: EntityManager, tenantId: string, id: string): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>('delete from webhook_endpoint where id = ? and tenant_id = ? returning id', [id, tenantId]);
  return rows.length > 0;
}

/**
 * Makes `secretEncrypted` the signing secret of the tenant's endpoint; the current one stays valid
 * for `overlapSeconds`. @returns false when there is no such endpoint.
 */
export async function rotateEndpointSecret(em: EntityManager, tenantId: string, id: string, secretEncrypted: string, overlapSeconds: number): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update webhook_endpoint set previous_secret_encrypted = secret_encrypted,
           previous_secret_expires_at = now() + make_interval(secs => ?), secret_encrypted = ?, updated_at = now()
         where id = ? and tenant_id = ? returning id`,
    [overlapSeconds, secretEncrypted, id, tenantId],
  );
  return rows.length > 0;
}

/** What a delivery needs of its endpoint: where, whether enabled, the secrets that sign, and whether the previous one is still within its rotation overlap. */
export type EndpointSecrets = Pick<WebhookEndpoint, 'url' | 'enabled' | 'secretEncrypted' | 'previousSecretEncrypted'> & { previousSecretValid: boolean };

/** The delivery view of the tenant's endpoint, or undefined. */
export async function findEndpointSecrets(em: EntityManager, tenantId: string, id: string): Promise<EndpointSecrets | undefined> {
  const [row] = await em.execute<{ url: string; enabled: boolean; secret_encrypted: string; previous_secret_encrypted: string | null; previous_secret_valid: boolean }[]>(
    `select url, enabled, secret_encrypted, previous_secret_encrypted,
              coalesce(previous_secret_expires_at > now(), false) as previous_secret_valid
       from webhook_endpoint where id = ? and tenant_id = ?`,
    [id, tenantId],
  );
  return row
    ? { url: row.url, enabled: row.enabled, secretEncrypted: row.secret_encrypted, previousSecretEncrypted: row.previous_secret_encrypted, previousSecretValid: row.previous_secret_valid }
    : undefined;
}

/** Clears the failing mark of an endpoint after a successful delivery. */
export async function clearEndpointFailing(em: EntityManager, tenantId: string, id: string): Promise<void> {
  await em.execute('update webhook_endpoint set failing_since = null where id = ? and tenant_id = ? and failing_since is not null', [id, tenantId], 'run');
}

/**
 * Marks the tenant's endpoint failing since now unless it already is.
 * @returns whether it has been failing for `disableAfterSeconds` or more, and whether it is enabled;
 *   undefined when there is no such endpoint.
 */
export async function markEndpointFailing(
  em: EntityManager,
  tenantId: string,
  id: string,
  disableAfterSeconds: number,
): Promise<{ overdue: boolean; enabled: boolean } | undefined> {
  const [state] = await em.execute<{ overdue: boolean; enabled: boolean }[]>(
    `update webhook_endpoint set failing_since = coalesce(failing_since, now()) where id = ? and tenant_id = ?
       returning failing_since <= now() - make_interval(secs => ?) as overdue, enabled`,
    [id, tenantId, disableAfterSeconds],
  );
  return state;
}

/**
 * Disables the tenant's enabled endpoint as failing (reads the tenant's name on the way).
 * @returns its URL and the tenant name, or undefined when it was not enabled (another worker disabled it first).
 */
export async function disableFailingEndpoint(em: EntityManager, tenantId: string, id: string): Promise<{ url: string; tenantName: string } | undefined> {
  const [row] = await em.execute<{ url: string; name: string }[]>(
    `update webhook_endpoint e set enabled = false, disabled_reason = 'failing', updated_at = now()
         from tenant t where e.id = ? and e.tenant_id = ? and t.id = e.tenant_id and e.enabled
         returning e.url, t.name`,
    [id, tenantId],
  );
  return row ? { url: row.url, tenantName: row.name } : undefined;
}

/** The tenant's endpoints with their secret ciphertexts, by id (key rotation). */
export async function findEndpointCiphertexts(em: EntityManager, tenantId: string): Promise<Pick<WebhookEndpoint, 'id' | 'secretEncrypted' | 'previousSecretEncrypted'>[]> {
  const rows = (await em.execute(
    'select id, secret_encrypted, previous_secret_encrypted from webhook_endpoint where tenant_id = ? order by id',
    [tenantId],
  )) as { id: string; secret_encrypted: string; previous_secret_encrypted: string | null }[];
  return rows.map((row) => ({ id: row.id, secretEncrypted: row.secret_encrypted, previousSecretEncrypted: row.previous_secret_encrypted }));
}

/**
 * Replaces the current (`current`) or previous (`previous`) secret ciphertext of the tenant's
 * endpoint, conditional on it still being `old`. @returns false when it changed meanwhile.
 */
export async function replaceEndpointCiphertext(
  em: EntityManager,
  tenantId: string,
  id: string,
  which: 'current' | 'previous',
  fresh: string,
  old: string,
): Promise<boolean> {
  const column = which === 'current' ? 'secret_encrypted' : 'previous_secret_encrypted';
  const updated = await em.execute(`update webhook_endpoint set ${column} = ? where id = ? and tenant_id = ? and ${column} = ? returning id`, [
    fresh, id, tenantId, old,
  ]);
  return updated.length > 0;
}
