import type { EntityManager } from '@mikro-orm/postgresql';
import { stringify } from 'csv-stringify/sync';
import { findExportBatch, type AuditExportFilter, type ExportedAuditEvent, type ExportKeyset } from '../../queries/audit-event.js';

export type { AuditExportFilter, ExportedAuditEvent } from '../../queries/audit-event.js';

/** The formats of GET audit/export (docs/audit.md "Export"). */
export const AUDIT_EXPORT_FORMATS = ['csv', 'json'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/** Rows read per statement while exporting: the memory an export holds at once, whatever its size. */
export const AUDIT_EXPORT_BATCH_ROWS = 1000;

/** Where an export is written; `write` resolves when the chunk may be followed by the next (backpressure). */
export interface ExportSink {
  write(chunk: string): Promise<void>;
}

/** The CSV columns, in order (docs/audit.md "Export"). */
export const AUDIT_CSV_COLUMNS = [
  'createdAt', 'action', 'actorType', 'actorId', 'actorEmail', 'targetType', 'targetId', 'targetEmail', 'ip', 'userAgent', 'details',
] as const;

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
    let after: ExportKeyset | null = null;
    let count = 0;
    if (format === 'json') await sink.write('[');
    for (;;) {
      const batch = await findExportBatch(em, tenantId, filter, after, this.batchRows);
      if (batch.events.length === 0) break;
      await sink.write(format === 'csv' ? toCsv(batch.events, count === 0) : toJsonItems(batch.events, count === 0));
      count += batch.events.length;
      after = batch.next;
      if (batch.events.length < this.batchRows) break;
    }
    if (format === 'json') await sink.write(count === 0 ? ']' : '\n]');
    else if (count === 0) await sink.write(toCsv([], true));
    return count;
  }
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
