import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../db/rows.js';
import { UserImportJobSchema, type UserImportJob, type UserImportJobStatus } from '../entities/user-import.js';

/**
 * The queries of the `user_import_job` table (docs/import.md "Import jobs"): a job's status and
 * counters. Every statement is scoped by tenant id except the worker's, which reads the job its
 * queue payload names (with the tenant id of that payload).
 */

/** Inserts a new job row. */
export async function insertImportJob(em: EntityManager, job: UserImportJob): Promise<void> {
  await em.insert(UserImportJobSchema, job);
}

/** The tenant's job with this id, or null. */
export async function findImportJob(em: EntityManager, tenantId: string, jobId: string): Promise<UserImportJob | null> {
  return em.findOne(UserImportJobSchema, { id: jobId, tenantId }, { disableIdentityMap: true });
}

/** Locks (`FOR UPDATE`) and returns the tenant's job, or null, in one statement. Call inside the caller's transaction. */
export async function lockImportJob(tx: EntityManager, tenantId: string, jobId: string): Promise<UserImportJob | null> {
  const rows = await tx.execute<Record<string, unknown>[]>('select * from user_import_job where id = ? and tenant_id = ? for update', [jobId, tenantId]);
  return rows[0] ? rowToEntity(tx, UserImportJobSchema, rows[0]) : null;
}

/** Stamps `updated_at` of a job still receiving its body: it is alive (the abandoned-upload sweep spares it). */
export async function touchReceivingImportJob(em: EntityManager, tenantId: string, jobId: string, now: Date): Promise<void> {
  await em.nativeUpdate(UserImportJobSchema, { id: jobId, tenantId, status: 'Receiving' }, { updatedAt: now });
}

/**
 * Deletes, in every tenant, the jobs still `Receiving` whose body stopped arriving before `before`
 * (the process that received it died, or the client went away without the connection closing): their
 * lines go with them (the retention sweep, docs/import.md "Import jobs").
 * @returns how many were deleted.
 */
export async function deleteAbandonedImportJobs(em: EntityManager, before: Date): Promise<number> {
  const rows = await em.execute<{ id: string }[]>("delete from user_import_job where status = 'Receiving' and updated_at < ? returning id", [before]);
  return rows.length;
}

/** Sets the received line count and the status (`Queued` once the body is in). */
export async function markImportJobReceived(em: EntityManager, tenantId: string, jobId: string, total: number): Promise<void> {
  await em.nativeUpdate(UserImportJobSchema, { id: jobId, tenantId }, { total, status: 'Queued', updatedAt: new Date() });
}

/** Deletes a job (its lines and errors go with it): a body that could not be received. */
export async function deleteImportJob(em: EntityManager, tenantId: string, jobId: string): Promise<void> {
  await em.nativeDelete(UserImportJobSchema, { id: jobId, tenantId });
}

/** Adds one chunk's counts to the job and sets it `Running`. */
export async function addImportJobProgress(
  tx: EntityManager,
  tenantId: string,
  jobId: string,
  counts: { processed: number; created: number; skipped: number; failed: number },
): Promise<void> {
  await tx.execute(
    `update user_import_job
        set processed = processed + ?, created = created + ?, skipped = skipped + ?, failed = failed + ?, status = 'Running', updated_at = ?
      where id = ? and tenant_id = ?`,
    [counts.processed, counts.created, counts.skipped, counts.failed, new Date(), jobId, tenantId],
  );
}

/** Ends the job: `Completed` or `Failed`, with `finished_at`. */
export async function finishImportJob(tx: EntityManager, tenantId: string, jobId: string, status: Extract<UserImportJobStatus, 'Completed' | 'Failed'>): Promise<void> {
  const now = new Date();
  await tx.nativeUpdate(UserImportJobSchema, { id: jobId, tenantId }, { status, updatedAt: now, finishedAt: now });
}
