import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { AuditAction } from '../../entities/audit-event.js';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import { insertAuditEventWithOutbox, type NewAuditEvent } from '../../queries/audit-event.js';

/** One audit event to record; `details` must never hold a secret. */
export interface AuditInput {
  tenantId: string;
  action: AuditAction;
  actor: Actor;
  target?: { type: string; id: string | null };
  meta?: RequestMeta;
  details?: Record<string, unknown>;
}

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
    const event: NewAuditEvent = {
      // RFC 9562 UUIDv7: time-ordered and monotonic within this process, so events of one
      // operation written in the same millisecond still list in the order they happened.
      id: uuidv7(),
      tenantId: input.tenantId,
      action: input.action,
      actorType: input.actor.type,
      actorId: input.actor.id,
      targetType: input.target?.type ?? null,
      targetId: input.target?.id ?? null,
      ip: input.meta?.ip ?? null,
      userAgent: input.meta?.userAgent ?? null,
      details: input.details ?? {},
      createdAt: new Date(),
    };
    await insertAuditEventWithOutbox(em, event, this.jobQueueName);
  }
}
