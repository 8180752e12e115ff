import type { EntityManager } from '@mikro-orm/postgresql';
import { stringify } from 'csv-stringify/sync';
import type { AuditAction } from '../../entities/audit-event.js';
import { likeLiteral, toAuditItem, type AuditItem, type AuditRow } from './audit-log-service.js';

/** The formats of GET audit/export (docs/audit.md "Export"). */
export const AUDIT_EXPORT_FORMATS = ['csv', 'json'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/** Rows read per statement while exporting: the memory an export holds at once, whatever its size. */
export const AUDIT_EXPORT_BATCH_ROWS = 1000;

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

/** Where an export is written; `write` resolves when the chunk may be followed by the next (backpressure). */
export interface ExportSink {
  write(chunk: string): Promise<void>;
}

/** One exported event: the `AuditEvent` of GET audit plus the emails of its actor and target users. */
export type ExportedAuditEvent = AuditItem & { actorEmail: string | null; targetEmail: string | null };

/** The CSV columns, in order (docs/audit.md "Export"). */
export const AUDIT_CSV_COLUMNS = [
  'createdAt', 'action', 'actorType', 'actorId', 'actorEmail', 'targetType', 'targetId', 'targetEmail', 'ip', 'userAgent', 'details',
] as const;

type ExportRow = AuditRow & { keyset_at: string; actor_email: string | null; target_email: string | null };

/**
 * Exports a tenant's audit log as CSV or JSON, newest first, without holding it in memory: rows are
 * read {@link AUDIT_EXPORT_BATCH_ROWS} at a time by keyset (`created_at`, `id`) on the tenant/time
 * index and written to the sink before the next batch is read (docs/audit.md "Export").
 */
export class AuditExportService {
  /** @param batchRows rows read per statement (tests pass a small number to cross batch boundaries). */
  constructor(private readonly batchRows: number = AUDIT_EXPORT_BATCH_ROWS) {}

  /**
   * Writes every event matching `filter` to `sink`: CSV (RFC 4180, a header line, `details` as JSON
   * text, cells a spreadsheet would run as a formula prefixed with `'` as OWASP advises) or a JSON array
   * of {@link ExportedAuditEvent}.
   * @returns how many events were written.
   */
  async export(em: EntityManager, tenantId: string, filter: AuditExportFilter, format: AuditExportFormat, sink: ExportSink): Promise<number> {
    const { where, params } = exportConditions(tenantId, filter);
    // The keyset carries the time as PostgreSQL's text (microseconds), not a JS Date (milliseconds).
    let after: { createdAt: string; id: string } | null = null;
    let count = 0;
    if (format === 'json') await sink.write('[');
    for (;;) {
      const keyset: string = after ? ' and (e.created_at, e.id) < (?::timestamptz, ?)' : '';
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
        [...params, ...keysetParams, this.batchRows],
      )) as ExportRow[];
      if (rows.length === 0) break;
      const events = rows.map(toExportedEvent);
      await sink.write(format === 'csv' ? toCsv(events, count === 0) : toJsonItems(events, count === 0));
      count += rows.length;
      const last = rows[rows.length - 1]!;
      after = { createdAt: last.keyset_at, id: last.id };
      if (rows.length < this.batchRows) break;
    }
    if (format === 'json') await sink.write(count === 0 ? ']' : '\n]');
    else if (count === 0) await sink.write(toCsv([], true));
    return count;
  }
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

function toExportedEvent(row: ExportRow): ExportedAuditEvent {
  return { ...toAuditItem(row), actorEmail: row.actor_email, targetEmail: row.target_email };
}

/** A cell a spreadsheet would evaluate as a formula (OWASP "CSV Injection") gets a leading `'`. */
function inertCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

function toCsv(events: ExportedAuditEvent[], header: boolean): string {
  const records = events.map((e) => [
    e.createdAt.toISOString(), e.action, e.actorType, e.actorId ?? '', e.actorEmail ?? '', e.targetType ?? '', e.targetId ?? '',
    e.targetEmail ?? '', e.ip ?? '', e.userAgent ?? '', JSON.stringify(e.details),
  ].map(inertCell));
  return stringify(records, { header, columns: [...AUDIT_CSV_COLUMNS], record_delimiter: 'windows' });
}

function toJsonItems(events: ExportedAuditEvent[], first: boolean): string {
  return events.map((e, i) => `${first && i === 0 ? '\n' : ',\n'}${JSON.stringify({ ...e, createdAt: e.createdAt.toISOString() })}`).join('');
}
