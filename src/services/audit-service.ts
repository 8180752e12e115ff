import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { AuditEventSchema, type AuditAction } from '../entities/audit-event.js';
import type { Actor, RequestMeta } from '../lib/request-meta.js';

/** One audit event to record; `details` must never hold a secret. */
export interface AuditInput {
  tenantId: string;
  action: AuditAction;
  actor: Actor;
  target?: { type: string; id: string | null };
  meta?: RequestMeta;
  details?: Record<string, unknown>;
}

/** Writes the audit log of SPEC.md part 6 (CONTRACT.md "Audit"). */
export class AuditService {
  /**
   * Inserts one event with the given entity manager, so it commits or rolls back with the
   * operation it describes when `em` is inside a transaction.
   */
  async record(em: EntityManager, input: AuditInput): Promise<void> {
    await em.insert(AuditEventSchema, {
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
    });
  }
}
