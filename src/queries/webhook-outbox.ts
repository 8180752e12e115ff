/**
 * Runs of one delivery before it is given up: with the 30 s default base, about a day of retries
 * (docs/events.md "Webhooks").
 */
export const WEBHOOK_MAX_ATTEMPTS = 15;

/**
 * The outbox half of a statement that records audit events (docs/events.md "Webhooks"): an INSERT
 * that queues one `webhook.deliver` job per enabled endpoint of the event's tenant subscribed to its
 * action. `eventsCte` names a CTE yielding `id, tenant_id, action` of the new events; the statement
 * takes one bind parameter, the job queue's name. Owned here so the job rows of webhooks are written
 * by the webhooks feature's SQL only.
 */
export function webhookOutboxInsert(eventsCte: string): string {
  return `insert into job (id, queue, kind, payload, run_at, attempts, max_attempts, created_at)
    select gen_random_uuid(), ?, 'webhook.deliver',
           jsonb_build_object('endpointId', e.id, 'tenantId', e.tenant_id, 'eventType', ${eventsCte}.action, 'auditEventId', ${eventsCte}.id),
           now(), 0, ${WEBHOOK_MAX_ATTEMPTS}, now()
    from ${eventsCte} join webhook_endpoint e on e.tenant_id = ${eventsCte}.tenant_id and e.enabled
      and (e.event_types is null or e.event_types @> jsonb_build_array(${eventsCte}.action))`;
}
