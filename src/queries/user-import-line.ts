import type { EntityManager } from '@mikro-orm/postgresql';
import { executeWithArrays } from '../db/pooled-query.js';
import type { UserImportLine } from '../entities/user-import.js';

/**
 * The queries of the `user_import_line` table (docs/import.md "Import jobs"): the NDJSON lines of a
 * job received and not yet imported. Scoped by job id, whose tenant the caller checked.
 */

/** Inserts received lines in one statement, each column sent as one array parameter (at most a few thousand lines a call). */
export async function insertImportLines(em: EntityManager, lines: UserImportLine[]): Promise<void> {
  if (lines.length === 0) return;
  await executeWithArrays(
    em,
    'insert into user_import_line (job_id, line_no, payload) select * from unnest(?::uuid[], ?::int[], ?::text[])',
    [lines.map((line) => line.jobId), lines.map((line) => line.lineNo), lines.map((line) => line.payload)],
  );
}

/**
 * Takes the job's next `limit` lines in order, from line `fromLineNo` on: deletes and returns them,
 * in the caller's transaction, so they are gone exactly when their import commits (a job resumes
 * after a crash where it stopped). `fromLineNo` is the job's `processed` count: lines are numbered
 * from 0 without gaps and taken in order, each chunk's deletion committing with its count, so no line
 * below it is left. Starting the index scan there skips the entries of the lines already taken,
 * which stay in the index until a vacuum (a scan from the start of the job would read them all,
 * every chunk).
 */
export async function takeImportLines(
  tx: EntityManager, jobId: string, fromLineNo: number, limit: number,
): Promise<Pick<UserImportLine, 'lineNo' | 'payload'>[]> {
  const rows = await tx.execute<{ line_no: number; payload: string }[]>(
    `delete from user_import_line
      where job_id = ? and line_no in (select line_no from user_import_line where job_id = ? and line_no >= ? order by line_no limit ?)
      returning line_no, payload`,
    [jobId, jobId, fromLineNo, limit],
  );
  return rows.map((row) => ({ lineNo: Number(row.line_no), payload: row.payload })).sort((a, b) => a.lineNo - b.lineNo);
}
