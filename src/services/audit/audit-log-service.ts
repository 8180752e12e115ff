import type { EntityManager } from '@mikro-orm/postgresql';
import type { ActorType, AuditAction, AuditEvent } from '../../entities/audit-event.js';

/** Default and largest page size of GET audit (docs/audit.md). */
export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;

/** Filters of GET audit; all optional except `limit`. */
export interface AuditQuery {
  action?: AuditAction;
  /** Events where this user is the actor or the target. */
  userId?: string;
  /** Exclusive upper bound on `createdAt`: the next page starts before the last item's time. */
  before?: Date;
  /** Inclusive lower bound on `createdAt` (the start of a date range). */
  since?: Date;
  /** 1 to 200 characters, matched case-insensitively against the action, the details text and the email of the acting or targeted user. */
  search?: string;
  /** 1 to 200. */
  limit: number;
}

/** One audit event as read back (the `AuditEvent` schema of the OpenAPI document). */
export type AuditItem = Omit<AuditEvent, 'tenantId'>;

/** An `audit_event` row as plain SQL returns it. */
export interface AuditRow {
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
 * How many of the newest events (after the other filters) the first pass of a `search` examines. A
 * term that is common finds a full page there at once; a rare one goes to the index-driven pass.
 */
export const AUDIT_SEARCH_RECENT_WINDOW = 10_000;

/** One parameterised statement (`?` placeholders). */
export interface AuditSql {
  sql: string;
  params: unknown[];
}

/**
 * The statements of one read: `main` always; with `search`, `main` is the recent-window pass and
 * `fallback` the pass over every match, run only when `main` found less than a page.
 */
export interface AuditPlan {
  main: AuditSql;
  fallback?: AuditSql;
}

/**
 * Reads a tenant's audit log (GET audit, docs/audit.md), newest first. The SQL is shaped for the indexes of
 * the migrations (see docs/audit.md): the tenant/time and tenant/action/time indexes serve the plain
 * and `action` reads; `userId` runs as two ordered index reads (actor side, target side) merged;
 * `search` first filters the newest {@link AUDIT_SEARCH_RECENT_WINDOW} events and, when that yields
 * less than a page, collects every match through the trigram index (when `pg_trgm` is installed) and
 * the actor/target indexes, then sorts them.
 */
export class AuditLogService {
  /** @returns at most `query.limit` events, ordered by `createdAt` then `id`, both descending. */
  async list(em: EntityManager, tenantId: string, query: AuditQuery): Promise<AuditItem[]> {
    const plan = this.plan(tenantId, query);
    let rows = (await em.execute(plan.main.sql, plan.main.params)) as AuditRow[];
    if (plan.fallback && rows.length < query.limit) rows = (await em.execute(plan.fallback.sql, plan.fallback.params)) as AuditRow[];
    return rows.map(toAuditItem);
  }

  /**
   * The statements {@link list} runs for a query; exposed so their plans can be inspected
   * (scripts/audit-explain.ts).
   */
  plan(tenantId: string, query: AuditQuery): AuditPlan {
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
    if (query.since) {
      conditions.push('created_at >= ?');
      params.push(query.since);
    }
    if (query.search) return this.searchPlan(tenantId, query.search, conditions, params, query);
    const where = conditions.join(' and ');
    if (!query.userId) {
      return { main: { sql: `select ${COLUMNS} from audit_event where ${where} ${ORDER} limit ?`, params: [...params, query.limit] } };
    }
    return {
      main: {
        sql: `select ${COLUMNS} from (
           (select ${COLUMNS} from audit_event where ${where} and actor_id = ? ${ORDER} limit ?)
           union
           (select ${COLUMNS} from audit_event where ${where} and target_id = ? ${ORDER} limit ?)
         ) as matched ${ORDER} limit ?`,
        params: [...params, query.userId, query.limit, ...params, query.userId, query.limit, query.limit],
      },
    };
  }

  private searchPlan(tenantId: string, search: string, conditions: string[], params: unknown[], query: AuditQuery): AuditPlan {
    if (query.userId) {
      conditions.push('(actor_id = ? or target_id = ?)');
      params.push(query.userId, query.userId);
    }
    const where = conditions.join(' and ');
    const pattern = likeLiteral(search);
    const usersMatching = 'select u.id from app_user u where u.tenant_id = ? and u.email ilike ?';
    const matches = `((action || ' ' || details::text) ilike ?
        or actor_id = any(array(${usersMatching}))
        or target_id = any(array(select id::text from (${usersMatching}) as m)))`;
    const matchParams = [pattern, tenantId, pattern, tenantId, pattern];
    const main: AuditSql = {
      sql: `select ${COLUMNS} from (select ${COLUMNS} from audit_event where ${where} ${ORDER} limit ?) as recent
             where ${matches} ${ORDER} limit ?`,
      params: [...params, AUDIT_SEARCH_RECENT_WINDOW, ...matchParams, query.limit],
    };
    // Every match, each arm through its own index, then the newest page of them.
    const fallback: AuditSql = {
      sql: `select ${COLUMNS} from audit_event where id in (
              select id from (
                select id, created_at from audit_event where ${where} and (action || ' ' || details::text) ilike ?
                union
                select id, created_at from audit_event where ${where} and actor_id in (${usersMatching})
                union
                select id, created_at from audit_event where ${where} and target_id in (select id::text from (${usersMatching}) as m)
              ) as hits ${ORDER} limit ?
            ) ${ORDER}`,
      params: [...params, pattern, ...params, tenantId, pattern, ...params, tenantId, pattern, query.limit],
    };
    return { main, fallback };
  }
}

/** An audit row as the API shows it (the `AuditEvent` schema of the OpenAPI document). */
export function toAuditItem(row: AuditRow): AuditItem {
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
