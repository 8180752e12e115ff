import type { EntityManager } from '@mikro-orm/postgresql';
import { auditReadPlan, readAuditEvents, type AuditItem, type AuditPlan, type AuditQuery } from '../../queries/audit-event.js';

/** Default and largest page size of GET audit (docs/audit.md). */
export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;

export type { AuditItem, AuditQuery } from '../../queries/audit-event.js';

/**
 * Reads a tenant's audit log (GET audit, docs/audit.md), newest first. The statements are built by
 * {@link auditReadPlan} for the indexes of the migrations (see docs/audit.md): the tenant/time and
 * tenant/action/time indexes serve the plain and `action` reads; `userId` runs as two ordered index
 * reads (actor side, target side) merged; `search` first filters the newest 10,000 events
 * (`AUDIT_SEARCH_RECENT_WINDOW`) and, when that yields less than a page, collects every
 * match through the trigram index (when `pg_trgm` is installed) and the actor/target indexes.
 */
export class AuditLogService {
  /** @returns at most `query.limit` events, ordered by `createdAt` then `id`, both descending. */
  async list(em: EntityManager, tenantId: string, query: AuditQuery): Promise<AuditItem[]> {
    return readAuditEvents(em, auditReadPlan(tenantId, query), query.limit);
  }

  /** The statements {@link list} runs for a query; exposed so their plans can be inspected (scripts/audit-explain.ts). */
  plan(tenantId: string, query: AuditQuery): AuditPlan {
    return auditReadPlan(tenantId, query);
  }
}
