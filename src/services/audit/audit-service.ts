import type { EventManager, EventSubscriber, Transaction, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { AuditAction } from '../../entities/audit-event.js';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import { WEBHOOK_MAX_ATTEMPTS } from '../webhooks/webhook-service.js';

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

type AuditRow = unknown[];

/**
 * One statement that inserts audit rows and, in the same transaction, queues one `webhook.deliver`
 * job per enabled endpoint of the tenant subscribed to the row's action (transactional outbox,
 * docs/events.md): a committed event always reaches the queue, a rolled-back one never does.
 */
function insertWithOutbox(rowCount: number): string {
  return `with ev as (
      insert into audit_event (${COLUMNS.join(', ')}) values ${Array.from({ length: rowCount }, () => ROW_PLACEHOLDERS).join(', ')}
      returning id, tenant_id, action)
    insert into job (id, queue, kind, payload, run_at, attempts, max_attempts, created_at)
    select gen_random_uuid(), ?, 'webhook.deliver',
           jsonb_build_object('endpointId', e.id, 'tenantId', e.tenant_id, 'eventType', ev.action, 'auditEventId', ev.id),
           now(), 0, ${WEBHOOK_MAX_ATTEMPTS}, now()
    from ev join webhook_endpoint e on e.tenant_id = ev.tenant_id and e.enabled
      and (e.event_types is null or e.event_types @> jsonb_build_array(ev.action))`;
}

/**
 * Writes the audit log (docs/audit.md), and with each event queues its
 * webhook deliveries in the same statement (docs/events.md "Webhooks").
 *
 * Events recorded inside a top-level transaction are not inserted one by one: they are kept with
 * the transaction and written by one multi-row INSERT just before it commits (MikroORM's
 * `beforeTransactionCommit` hook), still inside it. So they commit or roll back with the operation
 * they describe exactly as before (none lost, none for an operation that did not happen), for one
 * round trip per transaction instead of one per event. Outside a transaction, or inside a nested
 * one (savepoint), an event is inserted at once.
 */
export class AuditService implements EventSubscriber {
  private readonly pending = new WeakMap<Transaction, AuditRow[]>();
  private readonly batching: boolean;

  /**
   * @param events the ORM's event manager; the service subscribes to it to write batched events
   *   at commit. Without it every event is inserted at once.
   * @param jobQueueName the job queue (`JOB_QUEUE`) the webhook deliveries are queued on.
   */
  constructor(
    events?: EventManager,
    private readonly jobQueueName = 'default',
  ) {
    this.batching = events !== undefined;
    events?.registerSubscriber(this);
  }

  /**
   * Records one event with the given entity manager, so it commits or rolls back with the operation
   * it describes when `em` is inside a transaction (see the class comment for when it is written).
   */
  async record(em: EntityManager, input: AuditInput): Promise<void> {
    const row: AuditRow = [
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
    const transaction = em.getTransactionContext<Transaction>();
    if (this.batching && transaction && !('savepointName' in transaction)) {
      const rows = this.pending.get(transaction);
      if (rows) rows.push(row);
      else this.pending.set(transaction, [row]);
      return;
    }
    await em.execute(insertWithOutbox(1), [...row, this.jobQueueName], 'run');
  }

  /** Writes the events kept for a committing transaction, inside it; a failure aborts the commit. */
  async beforeTransactionCommit(args: TransactionEventArgs): Promise<void> {
    const transaction = args.transaction;
    const rows = transaction ? this.pending.get(transaction) : undefined;
    if (!transaction || !rows) return;
    this.pending.delete(transaction);
    await args.em.getConnection('write').execute(insertWithOutbox(rows.length), [...rows.flat(), this.jobQueueName], 'run', transaction);
  }

  /** A rolled-back operation leaves no audit event. */
  afterTransactionRollback(args: TransactionEventArgs): void {
    if (args.transaction) this.pending.delete(args.transaction);
  }
}
