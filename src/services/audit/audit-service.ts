import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { AuditAction } from '../../entities/audit-event.js';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import { webhookOutboxInsert } from '../webhooks/webhook-outbox.js';

/** One audit event to record; `details` must never hold a secret. */
export interface AuditInput {
  tenantId: string;
  action: AuditAction;
  actor: Actor;
  target?: { type: string; id: string | null };
  meta?: RequestMeta;
  details?: Record<string, unknown>;
}

/** Columns of `audit_event` in insert order. */
const COLUMNS = ['id', 'tenant_id', 'action', 'actor_type', 'actor_id', 'target_type', 'target_id', 'ip', 'user_agent', 'details', 'created_at'] as const;
const ROW_PLACEHOLDERS = `(${COLUMNS.map(() => '?').join(', ')})`;

/**
 * One statement that inserts an audit row and, in the same transaction, queues one `webhook.deliver`
 * job per enabled endpoint of the tenant subscribed to the row's action (transactional outbox,
 * docs/events.md): a committed event always reaches the queue, a rolled-back one never does.
 * The last bind parameter is the job queue's name.
 */
const INSERT_WITH_OUTBOX = `with ev as (
    insert into audit_event (${COLUMNS.join(', ')}) values ${ROW_PLACEHOLDERS}
    returning id, tenant_id, action)
  ${webhookOutboxInsert('ev')}`;

/**
 * Writes the audit log (docs/audit.md), and with each event queues its webhook deliveries in the
 * same statement (docs/events.md "Webhooks").
 *
 * An event is inserted when it is recorded, with the entity manager the caller passes: inside the
 * caller's transaction it commits or rolls back with the operation it describes (none lost, none for
 * an operation that did not happen), and a failed insert fails that operation at the call.
 */
export class AuditService {
  /** @param jobQueueName the job queue (`JOB_QUEUE`) the webhook deliveries are queued on. */
  constructor(private readonly jobQueueName = 'default') {}

  /**
   * Records one event (and queues its webhook deliveries) with the given entity manager: one
   * statement, one round trip.
   * @throws the database's error when the row cannot be written (e.g. an unknown tenant id).
   */
  async record(em: EntityManager, input: AuditInput): Promise<void> {
    const row: unknown[] = [
      // RFC 9562 UUIDv7: time-ordered and monotonic within this process, so events of one
      // operation written in the same millisecond still list in the order they happened.
      uuidv7(),
      input.tenantId,
      input.action,
      input.actor.type,
      input.actor.id,
      input.target?.type ?? null,
      input.target?.id ?? null,
      input.meta?.ip ?? null,
      input.meta?.userAgent ?? null,
      JSON.stringify(input.details ?? {}),
      new Date(),
    ];
    await em.execute(INSERT_WITH_OUTBOX, [...row, this.jobQueueName], 'run');
  }
}
