import type { EntityManager } from '@mikro-orm/postgresql';
import type { ActorType, AuditAction, AuditEvent } from '../entities/audit-event.js';
import { webhookOutboxInsert } from './webhook-outbox.js';

/**
 * The queries of the `audit_event` table (docs/architecture.md "Rules", data access): the insert
 * with its webhook outbox rows, the reads of GET audit and its export, the reads other features make
 * (a webhook's body, a user's data export, who deleted a user) and the erasure scrub. Each function
 * takes the caller's entity manager (pass the transaction when it must run in one; the caller owns
 * it); every statement is scoped by tenant id. The SQL is shaped for the indexes of docs/audit.md.
 */

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


/** Columns of `audit_event` in insert order. */
const INSERT_COLUMNS = ['id', 'tenant_id', 'action', 'actor_type', 'actor_id', 'target_type', 'target_id', 'ip', 'user_agent', 'details', 'created_at'] as const;

/**
 * One statement that inserts an audit row and, in the same transaction, queues one `webhook.deliver`
 * job per enabled endpoint of the tenant subscribed to the row's action (transactional outbox,
 * docs/events.md). The last bind parameter is the job queue's name.
 */
const INSERT_WITH_OUTBOX = `with ev as (
    insert into audit_event (${INSERT_COLUMNS.join(', ')}) values (${INSERT_COLUMNS.map(() => '?').join(', ')})
    returning id, tenant_id, action)
  ${webhookOutboxInsert('ev')}`;

/** An event to insert: every column of the row. */
export type NewAuditEvent = AuditEvent;

/** Inserts an event and queues its webhook deliveries on `jobQueueName`, in one statement. */
export async function insertAuditEventWithOutbox(em: EntityManager, event: NewAuditEvent, jobQueueName: string): Promise<void> {
  await em.execute(
    INSERT_WITH_OUTBOX,
    [
      event.id, event.tenantId, event.action, event.actorType, event.actorId, event.targetType, event.targetId,
      event.ip, event.userAgent, JSON.stringify(event.details), event.createdAt, jobQueueName,
    ],
    'run',
  );
}

/** Runs a read plan of GET audit: `main`, then `fallback` when `main` found less than `limit`. */
export async function readAuditEvents(em: EntityManager, plan: AuditPlan, limit: number): Promise<AuditItem[]> {
  let rows = (await em.execute(plan.main.sql, plan.main.params)) as AuditRow[];
  if (plan.fallback && rows.length < limit) rows = (await em.execute(plan.fallback.sql, plan.fallback.params)) as AuditRow[];
  return rows.map(toAuditItem);
}

/**
 * The statements a read of GET audit runs for a query (see {@link readAuditEvents}); exposed so
 * their plans can be inspected (scripts/audit-explain.ts).
 */
export function auditReadPlan(tenantId: string, query: AuditQuery): AuditPlan {
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
  if (query.search) return searchPlan(tenantId, query.search, conditions, params, query);
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

function searchPlan(tenantId: string, search: string, conditions: string[], params: unknown[], query: AuditQuery): AuditPlan {
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

/** One event of the tenant by id (the body of its webhook delivery), or undefined. */
export async function findAuditEvent(em: EntityManager, tenantId: string, id: string): Promise<AuditItem | undefined> {
  const [row] = (await em.execute(`select ${COLUMNS} from audit_event where id = ? and tenant_id = ?`, [id, tenantId])) as AuditRow[];
  return row ? toAuditItem(row) : undefined;
}

/** The tenant's latest `limit` events of `action` about the target `targetType`/`targetId`, newest first. */
export async function findLatestEventsAboutTarget(
  em: EntityManager, tenantId: string, action: AuditAction, targetType: string, targetId: string, limit: number,
): Promise<AuditItem[]> {
  const rows = (await em.execute(
    `select ${COLUMNS} from audit_event where tenant_id = ? and target_id = ? and target_type = ? and action = ? order by created_at desc, id desc limit ?`,
    [tenantId, targetId, targetType, action, limit],
  )) as AuditRow[];
  return rows.map(toAuditItem);
}

/**
 * The events a user performed or that concern them or their sessions, oldest first (their data
 * export).
 */
export async function findAuditEventsAboutUser(em: EntityManager, tenantId: string, userId: string): Promise<AuditItem[]> {
  const rows = (await em.execute(
    `select ${COLUMNS}
       from audit_event
      where tenant_id = ?
        and (actor_id = ? or (target_type = 'user' and target_id = ?)
             or (target_type = 'session' and target_id in (select id::text from session where tenant_id = ? and user_id = ?)))
      order by created_at, id`,
    [tenantId, userId, userId, tenantId, userId],
  )) as AuditRow[];
  return rows.map(toAuditItem);
}

/** Who soft-deleted a user of the tenant most recently (its `UserSoftDeleted` actor), or undefined. */
export async function findLatestSoftDeletion(em: EntityManager, tenantId: string, userId: string): Promise<{ actorType: string; actorId: string | null } | undefined> {
  const [row] = (await em.execute(
    `select actor_type, actor_id from audit_event where tenant_id = ? and target_type = 'user' and target_id = ? and action = 'UserSoftDeleted'
      order by created_at desc limit 1`,
    [tenantId, userId],
  )) as { actor_type: string; actor_id: string | null }[];
  return row ? { actorType: row.actor_type, actorId: row.actor_id } : undefined;
}

/**
 * Removes an erased user's personal data from the audit rows of their tenant (docs/lifecycle.md
 * "Erasure"): the IP and user agent of their own actions, their address wherever a details value
 * is exactly it, and, in the rows about them, their earlier addresses (the `previousEmail` of their
 * `UserEmailChanged` rows) and the `previousEmail` / `newEmail` keys. Ids stay.
 * @returns how many rows were changed.
 */
export async function scrubAuditEventsOfUser(em: EntityManager, tenantId: string, userId: string, email: string): Promise<number> {
  const rows = (await em.execute(
    `with former as (
         select coalesce(jsonb_agg(c.details -> 'previousEmail'), '[]'::jsonb) as addresses
           from audit_event c
          where c.tenant_id = ? and c.action = 'UserEmailChanged' and c.target_type = 'user' and c.target_id = ?
       )
       update audit_event a set
          ip = case when a.actor_id = ? or a.actor_type = 'system' then null else a.ip end,
          user_agent = case when a.actor_id = ? or a.actor_type = 'system' then null else a.user_agent end,
          details = (select coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
                       from jsonb_each(a.details) e, former f
                      where e.value <> to_jsonb(?::text)
                        and not ((a.actor_id = ? or (a.target_type = 'user' and a.target_id = ?))
                                 and (e.key in ('previousEmail', 'newEmail') or jsonb_build_array(e.value) <@ f.addresses)))
        where a.tenant_id = ?
          and (a.actor_id = ?
               or (a.target_type = 'user' and a.target_id = ?)
               or (a.target_type = 'session' and a.target_id in (select s.id::text from session s where s.tenant_id = ? and s.user_id = ?))
               or exists (select 1 from jsonb_each(a.details) e where e.value = to_jsonb(?::text)))
        returning a.id`,
    [
      tenantId, userId,
      userId, userId, email, userId, userId,
      tenantId, userId, userId, tenantId, userId, email,
    ],
  )) as { id: string }[];
  return rows.length;
}

/** The filters of an export: those of GET audit without paging. */
export interface AuditExportFilter {
  action?: AuditAction;
  /** Events where this user is the actor or the target. */
  userId?: string;
  /** Inclusive lower bound on `createdAt`. */
  since?: Date;
  /** Exclusive upper bound on `createdAt`. */
  before?: Date;
  /** Matched case-insensitively against the action, the details text and the actor's or target's email. */
  search?: string;
}

/** One exported event: the `AuditEvent` of GET audit plus the emails of its actor and target users. */
export type ExportedAuditEvent = AuditItem & { actorEmail: string | null; targetEmail: string | null };

/** Where the next export batch starts: the last row's time as PostgreSQL's text (microseconds, not a JS Date's milliseconds) and id. */
export interface ExportKeyset {
  createdAt: string;
  id: string;
}

type ExportRow = AuditRow & { keyset_at: string; actor_email: string | null; target_email: string | null };

/**
 * One batch of an export (GET audit/export), newest first, by keyset (`created_at`, `id`) on the
 * tenant/time index, with the actor's and target's emails.
 * @param after where the previous batch ended, null for the first.
 */
export async function findExportBatch(
  em: EntityManager,
  tenantId: string,
  filter: AuditExportFilter,
  after: ExportKeyset | null,
  limit: number,
): Promise<{ events: ExportedAuditEvent[]; next: ExportKeyset | null }> {
  const { where, params } = exportConditions(tenantId, filter);
  const keyset = after ? ' and (e.created_at, e.id) < (?::timestamptz, ?)' : '';
  const keysetParams: unknown[] = after ? [after.createdAt, after.id] : [];
  const rows = (await em.execute(
    `select e.id, e.action, e.actor_type, e.actor_id, e.target_type, e.target_id, e.ip, e.user_agent, e.details, e.created_at, e.created_at::text as keyset_at,
            actor.email as actor_email, target.email as target_email
       from audit_event e
       left join app_user actor on actor.tenant_id = e.tenant_id and actor.id = e.actor_id
       left join app_user target on e.target_type = 'user' and target.tenant_id = e.tenant_id and target.id::text = e.target_id
      where ${where}${keyset}
      order by e.created_at desc, e.id desc
      limit ?`,
    [...params, ...keysetParams, limit],
  )) as ExportRow[];
  const last = rows.at(-1);
  return {
    events: rows.map((row) => ({ ...toAuditItem(row), actorEmail: row.actor_email, targetEmail: row.target_email })),
    next: last ? { createdAt: last.keyset_at, id: last.id } : null,
  };
}

/** The WHERE clause of an export (table alias `e`), every value a parameter. */
function exportConditions(tenantId: string, filter: AuditExportFilter): { where: string; params: unknown[] } {
  const conditions = ['e.tenant_id = ?'];
  const params: unknown[] = [tenantId];
  if (filter.action) {
    conditions.push('e.action = ?');
    params.push(filter.action);
  }
  if (filter.userId) {
    conditions.push('(e.actor_id = ? or e.target_id = ?)');
    params.push(filter.userId, filter.userId);
  }
  if (filter.since) {
    conditions.push('e.created_at >= ?');
    params.push(filter.since);
  }
  if (filter.before) {
    conditions.push('e.created_at < ?');
    params.push(filter.before);
  }
  if (filter.search) {
    const pattern = likeLiteral(filter.search);
    const usersMatching = 'select u.id from app_user u where u.tenant_id = ? and u.email ilike ?';
    conditions.push(`((e.action || ' ' || e.details::text) ilike ?
      or e.actor_id in (${usersMatching})
      or e.target_id in (select id::text from (${usersMatching}) as m))`);
    params.push(pattern, tenantId, pattern, tenantId, pattern);
  }
  return { where: conditions.join(' and '), params };
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
