import type { EntityManager } from '@mikro-orm/postgresql';
import type { ActorType, AuditAction, AuditEvent } from '../entities/audit-event.js';

/** Default and largest page size of GET audit (CONTRACT.md "Audit"). */
export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;

/** Filters of GET audit; all optional except `limit`. */
export interface AuditQuery {
  action?: AuditAction;
  /** Events where this user is the actor or the target. */
  userId?: string;
  /** Exclusive upper bound on `createdAt`: the next page starts before the last item's time. */
  before?: Date;
  /** 1 to 200 characters, matched case-insensitively against the action, the details text and the email of the acting or targeted user. */
  search?: string;
  /** 1 to 200. */
  limit: number;
}

/** One audit event as read back (CONTRACT.md "Audit" item). */
export type AuditItem = Omit<AuditEvent, 'tenantId'>;

interface AuditRow {
  id: string;
  action: AuditAction;
  actor_type: ActorType;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown> | string;
  created_at: Date | string;
}

const COLUMNS = 'id, action, actor_type, actor_id, target_type, target_id, ip, user_agent, details, created_at';
const ORDER = 'order by created_at desc, id desc';

/** Escapes `\`, `%` and `_` so user text is matched literally by LIKE / ILIKE (escape character `\`). */
export function likeLiteral(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Reads a tenant's audit log (SPEC.md GET audit), newest first. The SQL is shaped for the indexes of
 * the migrations (see docs/audit.md): the tenant/time and tenant/action/time indexes serve the plain
 * and `action` reads; `userId` runs as two ordered index reads (actor side, target side) merged;
 * `search` uses the trigram index when `pg_trgm` is installed.
 */
export class AuditLogService {
  /** @returns at most `query.limit` events, ordered by `createdAt` then `id`, both descending. */
  async list(em: EntityManager, tenantId: string, query: AuditQuery): Promise<AuditItem[]> {
    const conditions = ['tenant_id = ?'];
    const params: unknown[] = [tenantId];
    if (query.action) {
      conditions.push('action = ?');
      params.push(query.action);
    }
    if (query.before) {
      conditions.push('created_at < ?');
      params.push(query.before);
    }
    if (query.search) {
      const pattern = likeLiteral(query.search);
      conditions.push(`((action || ' ' || details::text) ilike ?
        or actor_id = any(array(select id from app_user where tenant_id = ? and email ilike ?))
        or target_id = any(array(select id::text from app_user where tenant_id = ? and email ilike ?)))`);
      params.push(pattern, tenantId, pattern, tenantId, pattern);
    }
    const where = conditions.join(' and ');
    let rows: AuditRow[];
    if (query.userId) {
      rows = (await em.execute(
        `select ${COLUMNS} from (
           (select ${COLUMNS} from audit_event where ${where} and actor_id = ? ${ORDER} limit ?)
           union
           (select ${COLUMNS} from audit_event where ${where} and target_id = ? ${ORDER} limit ?)
         ) as matched ${ORDER} limit ?`,
        [...params, query.userId, query.limit, ...params, query.userId, query.limit, query.limit],
      )) as AuditRow[];
    } else {
      rows = (await em.execute(`select ${COLUMNS} from audit_event where ${where} ${ORDER} limit ?`, [...params, query.limit])) as AuditRow[];
    }
    return rows.map(toItem);
  }
}

function toItem(row: AuditRow): AuditItem {
  return {
    id: row.id,
    action: row.action,
    actorType: row.actor_type,
    actorId: row.actor_id,
    targetType: row.target_type,
    targetId: row.target_id,
    ip: row.ip,
    userAgent: row.user_agent,
    details: typeof row.details === 'string' ? (JSON.parse(row.details) as Record<string, unknown>) : row.details,
    createdAt: new Date(row.created_at),
  };
}
