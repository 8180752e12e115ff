import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliveryOutcome, WebhookDelivery } from '../entities/webhook.js';

/**
 * The queries of the `webhook_delivery` table (docs/architecture.md "Rules", data access;
 * docs/events.md "Delivery log"): one row per delivery attempt. Each function takes the caller's
 * entity manager (pass the transaction when it must run in one; the caller owns it). Timestamps may
 * come back as `Date` or as text depending on the driver's type parsing.
 */

export type { DeliveryOutcome };

/** An attempt as the delivery log shows it (timestamps may come back as `Date` or as text). */
export type WebhookDeliveryRow = Omit<
  Pick<WebhookDelivery, 'id' | 'messageId' | 'eventType' | 'attempt' | 'outcome' | 'responseStatus' | 'latencyMs' | 'error' | 'nextRetryAt' | 'createdAt'>,
  'nextRetryAt' | 'createdAt'
> & { nextRetryAt: Date | string | null; createdAt: Date | string };

/** Inserts an `attempting` row before the POST. */
export async function insertAttempt(
  em: EntityManager,
  attempt: Pick<WebhookDelivery, 'id' | 'tenantId' | 'endpointId' | 'messageId' | 'eventType' | 'attempt'>,
): Promise<void> {
  await em.execute(
    `insert into webhook_delivery (id, tenant_id, endpoint_id, message_id, event_type, attempt, outcome, response_status, latency_ms, error, next_retry_at, created_at)
       values (?, ?, ?, ?, ?, ?, 'attempting', null, null, null, null, now())`,
    [attempt.id, attempt.tenantId, attempt.endpointId, attempt.messageId, attempt.eventType, attempt.attempt],
    'run',
  );
}

/** Finishes the attempt row `id` with its result. */
export async function finishAttempt(
  em: EntityManager,
  id: string,
  result: Pick<WebhookDelivery, 'responseStatus' | 'latencyMs' | 'error' | 'nextRetryAt'> & { outcome: Exclude<DeliveryOutcome, 'attempting'> },
): Promise<void> {
  await em.execute(
    `update webhook_delivery set outcome = ?, response_status = ?, latency_ms = ?, error = ?, next_retry_at = ? where id = ?`,
    [result.outcome, result.responseStatus, result.latencyMs, result.error, result.nextRetryAt, id],
    'run',
  );
}

/** The newest `limit` attempts to the tenant's endpoint, newest first. */
export async function findAttemptsOfEndpoint(em: EntityManager, tenantId: string, endpointId: string, limit: number): Promise<WebhookDeliveryRow[]> {
  const rows = await em.execute<{
    id: string; message_id: string; event_type: string; attempt: number; outcome: DeliveryOutcome; response_status: number | null;
    latency_ms: number | null; error: string | null; next_retry_at: Date | string | null; created_at: Date | string;
  }[]>(
    `select id, message_id, event_type, attempt, outcome, response_status, latency_ms, error, next_retry_at, created_at
       from webhook_delivery where endpoint_id = ? and tenant_id = ? order by created_at desc, attempt desc limit ?`,
    [endpointId, tenantId, limit],
  );
  return rows.map((r) => ({
    id: r.id, messageId: r.message_id, eventType: r.event_type, attempt: r.attempt, outcome: r.outcome, responseStatus: r.response_status,
    latencyMs: r.latency_ms, error: r.error, nextRetryAt: r.next_retry_at, createdAt: r.created_at,
  }));
}

/** Deletes up to `limit` rows of every tenant created before `before`, skipping locked rows. @returns how many. */
export async function deleteAttemptsBatch(em: EntityManager, before: Date, limit: number): Promise<number> {
  const rows = await em.execute<{ id: string }[]>(
    `delete from webhook_delivery where id in (
         select id from webhook_delivery where created_at < ? limit ? for update skip locked)
       returning id`,
    [before, limit],
  );
  return rows.length;
}
