import { v7 as uuidv7 } from 'uuid';
import type { AuditAction } from '../../entities/audit-event.js';
import type { AuditScope } from '../../lib/request-scope.js';
import { insertAuditEventWithOutbox, type NewAuditEvent } from '../../queries/audit-event.js';

/**
 * One audit event of a scope: what happened (`action`), to what (`target`), and its `details`, which
 * must never hold a secret. Who acted, from where and in which workspace come from the scope.
 */
export interface AuditEvent {
  action: AuditAction;
  target?: { type: string; id: string | null };
  details?: Record<string, unknown>;
}

/**
 * Writes the audit log (docs/audit.md), and with each event queues its webhook deliveries in the
 * same statement (docs/events.md "Webhooks").
 *
 * An event is inserted when it is recorded, with the entity manager of the scope the caller passes
 * (src/lib/request-scope.ts): inside the caller's transaction (`withEm(scope, tx)`) it commits or
 * rolls back with the operation it describes (none lost, none for an operation that did not happen),
 * and a failed insert fails that operation at the call. The actor and the request metadata come from
 * the scope, so no caller spells them: a request's scope (`ctx.scope`, built by the pipeline), a flow that identified
 * its user (`actingAs`), the service's own decision (`asSystem`), or work without a request
 * (`systemScope`).
 */
export class AuditService {
  /** @param jobQueueName the job queue (`JOB_QUEUE`) the webhook deliveries are queued on. */
  constructor(private readonly jobQueueName = 'default') {}

  /**
   * Records one event of `scope` (and queues its webhook deliveries) with the scope's entity manager,
   * the caller's transaction when it opened one (`withEm(scope, tx)`): one statement, one round trip.
   * The event's workspace is `scope.tenant.id`, its actor `scope.actor`, its `ip` and `userAgent`
   * those of `scope.meta` (docs/audit.md).
   * @throws the database's error when the row cannot be written (e.g. an unknown tenant id).
   */
  async record(scope: AuditScope, event: AuditEvent): Promise<void> {
    const row: NewAuditEvent = {
      // RFC 9562 UUIDv7: time-ordered and monotonic within this process, so events of one
      // operation written in the same millisecond still list in the order they happened.
      id: uuidv7(),
      tenantId: scope.tenant.id,
      action: event.action,
      actorType: scope.actor.type,
      actorId: scope.actor.id,
      targetType: event.target?.type ?? null,
      targetId: event.target?.id ?? null,
      ip: scope.meta.ip,
      userAgent: scope.meta.userAgent,
      details: event.details ?? {},
      createdAt: new Date(),
    };
    await insertAuditEventWithOutbox(scope.em, row, this.jobQueueName);
  }
}
