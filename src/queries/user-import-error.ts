import type { EntityManager } from '@mikro-orm/postgresql';
import type { UserImportError } from '../entities/user-import.js';

/**
 * The queries of the `user_import_error` table (docs/import.md "Import jobs"): a job's failure report,
 * one row per line that could not be imported. Scoped by job id, whose tenant the caller checked.
 */

/** Inserts failure-report rows (a line reported twice, after a resumed chunk, is kept once). */
export async function insertImportErrors(em: EntityManager, errors: UserImportError[]): Promise<void> {
  if (errors.length === 0) return;
  await em.execute(
    `insert into user_import_error (job_id, line_no, reason) values ${errors.map(() => '(?, ?, ?)').join(', ')} on conflict do nothing`,
    errors.flatMap((error) => [error.jobId, error.lineNo, error.reason]),
  );
}

/** One page of a job's failure report, by line number after `afterLineNo` (exclusive). */
export async function findImportErrors(em: EntityManager, jobId: string, afterLineNo: number, limit: number): Promise<Pick<UserImportError, 'lineNo' | 'reason'>[]> {
  const rows = await em.execute<{ line_no: number; reason: string }[]>(
    'select line_no, reason from user_import_error where job_id = ? and line_no > ? order by line_no limit ?',
    [jobId, afterLineNo, limit],
  );
  return rows.map((row) => ({ lineNo: Number(row.line_no), reason: row.reason }));
}
