import type { EntityManager } from '@mikro-orm/postgresql';
import type { Job, JobKind } from '../entities/job.js';

/**
 * The queries of the `job` table (docs/architecture.md "Rules", data access; docs/events.md): the
 * PostgreSQL job queue. Each function takes an entity manager: the caller's transaction for an
 * enqueue that must commit with its cause, a fresh fork for the worker's own statements.
 */

export type { JobKind };

/** A job a worker claimed; `attempts` counts this one. */
export type ClaimedJobRow = Pick<Job, 'id' | 'kind' | 'payload' | 'attempts' | 'maxAttempts'>;

/** What an enqueue stores; `delaySeconds` from now (database time) before the job is due. */
export type NewJob = Pick<Job, 'id' | 'queue' | 'kind' | 'payload' | 'maxAttempts' | 'recipientDigest'> & { delaySeconds: number };

/** Inserts a job, due `delaySeconds` from now (database time). */
export async function insertJob(em: EntityManager, job: NewJob): Promise<void> {
  await em.execute(
    `insert into job (id, queue, kind, payload, run_at, attempts, max_attempts, created_at, recipient_digest)
       values (?, ?, ?, ?::jsonb, now() + make_interval(secs => ?), 0, ?, now(), ?)`,
    [job.id, job.queue, job.kind, JSON.stringify(job.payload), job.delaySeconds, job.maxAttempts, job.recipientDigest],
    'run',
  );
}

/**
 * Claims up to `limit` due jobs of `queue` for `workerId` for `leaseSeconds` (oldest due first),
 * counting one attempt each; rows locked by another worker's claim are skipped, never waited for.
 */
export async function claimJobs(em: EntityManager, queue: string, workerId: string, leaseSeconds: number, limit: number): Promise<ClaimedJobRow[]> {
  const rows = await em.execute<{ id: string; kind: JobKind; payload: Record<string, unknown>; attempts: number; max_attempts: number }[]>(
    `update job set attempts = attempts + 1, locked_by = ?, locked_until = now() + make_interval(secs => ?)
       where id in (
         select id from job
         where queue = ? and failed_at is null and run_at <= now() and (locked_until is null or locked_until < now())
         order by run_at
         limit ?
         for update skip locked)
       returning id, kind, payload, attempts, max_attempts`,
    [workerId, leaseSeconds, queue, limit],
  );
  return rows.map((row) => ({ id: row.id, kind: row.kind, payload: row.payload, attempts: row.attempts, maxAttempts: row.max_attempts }));
}

/** Extends the lease of a job `workerId` holds. @returns false when it no longer holds it. */
export async function extendJobLease(em: EntityManager, jobId: string, workerId: string, leaseSeconds: number): Promise<boolean> {
  const result = (await em.execute(
    'update job set locked_until = now() + make_interval(secs => ?) where id = ? and locked_by = ?',
    [leaseSeconds, jobId, workerId],
    'run',
  )) as { affectedRows?: number };
  return (result.affectedRows ?? 0) > 0;
}

/** Deletes a finished job while `workerId` holds it. */
export async function deleteFinishedJob(em: EntityManager, jobId: string, workerId: string): Promise<void> {
  await em.execute('delete from job where id = ? and locked_by = ?', [jobId, workerId], 'run');
}

/** Marks a job `workerId` holds failed for good, with `error`. */
export async function markJobFailed(em: EntityManager, jobId: string, workerId: string, error: string): Promise<void> {
  await em.execute(
    'update job set failed_at = now(), locked_until = null, locked_by = null, last_error = ? where id = ? and locked_by = ?',
    [error, jobId, workerId], 'run',
  );
}

/** Releases a job `workerId` holds to run again in `retryInSeconds`, with `error`. */
export async function scheduleJobRetry(em: EntityManager, jobId: string, workerId: string, error: string, retryInSeconds: number): Promise<void> {
  await em.execute(
    `update job set run_at = now() + make_interval(secs => ?), locked_until = null, locked_by = null, last_error = ?
       where id = ? and locked_by = ?`,
    [retryInSeconds, error, jobId, workerId], 'run',
  );
}

/** Deletes up to `limit` jobs of `queue` that failed for good before `before`, skipping locked rows. @returns how many. */
export async function deleteFailedJobsBatch(em: EntityManager, queue: string, before: Date, limit: number): Promise<number> {
  const rows = await em.execute<{ id: string }[]>(
    `delete from job where id in (
         select id from job where queue = ? and failed_at is not null and failed_at < ? limit ? for update skip locked)
       returning id`,
    [queue, before, limit],
  );
  return rows.length;
}

/** Waiting, due and failed-for-good jobs of `queue`, and the seconds the oldest due, unclaimed job has waited. */
export async function jobStats(em: EntityManager, queue: string): Promise<{ pending: number; due: number; failed: number; oldestDueSeconds: number }> {
  const [row] = await em.execute<{ pending: string; due: string; failed: string; oldest_due_seconds: string | null }[]>(
    `select count(*) filter (where failed_at is null) as pending,
              count(*) filter (where failed_at is null and run_at <= now()) as due,
              count(*) filter (where failed_at is not null) as failed,
              -- waiting to be claimed: due and not held by a worker's lease
              extract(epoch from now() - min(run_at) filter (
                where failed_at is null and run_at <= now() and (locked_until is null or locked_until < now()))) as oldest_due_seconds
       from job where queue = ?`,
    [queue],
  );
  return {
    pending: Number(row?.pending ?? 0), due: Number(row?.due ?? 0), failed: Number(row?.failed ?? 0),
    oldestDueSeconds: Math.max(0, Number(row?.oldest_due_seconds ?? 0)),
  };
}

/**
 * Deletes, from every queue, the mail and account-mail jobs addressed to one of `digests`, and the
 * account-mail requests queued before they were sealed that name `email` in tenant `tenantId`.
 * @returns how many were deleted.
 */
export async function deleteJobsOfRecipient(em: EntityManager, digests: string[], tenantId: string, email: string): Promise<number> {
  const rows = await em.execute<{ id: string }[]>(
    `delete from job
        where (kind in ('mail.send', 'account-mail.request') and recipient_digest in (${digests.map(() => '?').join(', ')}))
           -- account-mail requests queued before they were sealed
           or (kind = 'account-mail.request' and payload->>'tenantId' = ? and lower(payload->>'email') = lower(?))
        returning id`,
    [...digests, tenantId, email],
  );
  return rows.length;
}

/** Deletes, from every queue, the jobs whose payload names tenant `tenantId`. @returns how many. */
export async function deleteJobsOfTenant(em: EntityManager, tenantId: string): Promise<number> {
  const rows = await em.execute<{ id: string }[]>(`delete from job where payload->>'tenantId' = ? returning id`, [tenantId]);
  return rows.length;
}

/** A queued mail or account-mail request with its sealed (keyring ciphertext) content, for key rotation. */
export interface SealedJob extends Pick<Job, 'id'> {
  kind: Extract<JobKind, 'mail.send' | 'account-mail.request'>;
  sealed: string | null;
}

/** One page (by id, after `afterId`) of mail and account-mail jobs, of one queue or of all. */
export async function findSealedJobs(em: EntityManager, afterId: string, limit: number, queue?: string): Promise<SealedJob[]> {
  return (await em.execute(
    `select id, kind, payload->>'sealed' as sealed from job
        where kind in ('mail.send', 'account-mail.request') and id > ?${queue === undefined ? '' : ' and queue = ?'}
        order by id limit ?`,
    queue === undefined ? [afterId, limit] : [afterId, queue, limit],
  )) as SealedJob[];
}

/**
 * Replaces a job's sealed content (and its recipient digest when given), conditional on the sealed
 * content still being `previous` (a worker may have sent and deleted it meanwhile).
 * @returns false when it changed meanwhile.
 */
export async function replaceSealedJob(em: EntityManager, jobId: string, fresh: string, digest: string | null, previous: string): Promise<boolean> {
  const updated = await em.execute(
    `update job set payload = payload || jsonb_build_object('sealed', ?::text), recipient_digest = coalesce(?, recipient_digest)
          where id = ? and payload->>'sealed' = ? returning id`,
    [fresh, digest, jobId, previous],
  );
  return updated.length > 0;
}

/** Reads one row of the job table (the readiness probe of the queue); throws when it cannot. */
export async function probeJobTable(em: EntityManager): Promise<void> {
  await em.execute('select 1 from job limit 1');
}
