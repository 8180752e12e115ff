import { randomUUID } from 'node:crypto';
import { TransactionContext } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { deleteAttemptsBatch } from '../../queries/webhook-delivery.js';
import {
  claimJobs, deleteFailedJobsBatch, deleteFinishedJob, extendJobLease, insertJob, jobStats, markJobFailed, scheduleJobRetry, type JobKind,
} from '../../queries/job.js';

export type { JobKind };

/** A job claimed by a worker. */
export interface ClaimedJob {
  id: string;
  kind: JobKind;
  payload: Record<string, unknown>;
  /** 1 on the first run, counting this one. */
  attempt: number;
  maxAttempts: number;
  /** The worker whose claim holds the job (its lease). */
  claimedBy: string;
}

/** Options of {@link JobQueue.enqueue}. */
export interface EnqueueOptions {
  /** Runs allowed in all before the job is kept as failed. */
  maxAttempts: number;
  /** Seconds before the first run; 0 = at once. */
  delaySeconds?: number;
  /** Job id; a new UUID when omitted. */
  id?: string;
  /** Keyed digest of the person the job is about (mail: its recipient), so erasure can find it; see queuedMailDigests. */
  recipientDigest?: string;
}

/** Rows deleted per statement by the retention sweep. */
export const RETENTION_BATCH_SIZE = 1000;

/**
 * Seconds a claimed job stays invisible to other workers; a worker that dies loses its claim after it.
 * Short, because the worker extends it while the job runs (a heartbeat every third of it, see
 * JobWorker), so a job whose worker died runs again soon, and a running job is never taken over.
 */
export const JOB_LEASE_SECONDS = 30;

/**
 * The durable job queue on the service's own PostgreSQL database (table `job`, docs/events.md).
 *
 * - Enqueueing is an INSERT on the caller's transaction when one is open (MikroORM's transaction
 *   context), so a job exists exactly when the change that caused it committed (transactional outbox).
 * - Workers claim due jobs with `FOR UPDATE SKIP LOCKED` and a lease of JOB_LEASE_SECONDS (extended
 *   while the job runs), so any number of instances share the queue and each job runs on one of them
 *   at a time; a job whose worker died is claimed again after the lease (at-least-once).
 * - A finished job is deleted; a failed one is retried later, or kept with `failed_at` once its
 *   attempts are used up, until the retention sweep ({@link JobQueue.purgeExpired}) deletes it.
 * The same SQL runs on PostgreSQL and on the embedded PGlite (no LISTEN/NOTIFY: workers poll).
 */
export class JobQueue {
  /**
   * @param name the queue (`JOB_QUEUE`) this instance writes to and claims from; every job row
   *   carries it, so separate deployments (or test runs) on one database never take each other's jobs.
   */
  constructor(
    private readonly orm: MikroORM,
    readonly name: string,
    /** Seconds of a claim's lease ({@link JOB_LEASE_SECONDS}). */
    readonly leaseSeconds: number = JOB_LEASE_SECONDS,
  ) {}

  /** The entity manager of the transaction open in this async context, or a fresh fork (autocommit). */
  private currentEm(em?: EntityManager): EntityManager {
    return em ?? (TransactionContext.getEntityManager(this.orm.em.name) as EntityManager | undefined) ?? this.orm.em.fork();
  }

  /**
   * Adds a job. With `em` (or inside `em.transactional`) it commits or rolls back with the caller.
   * @returns the job id.
   */
  async enqueue(kind: JobKind, payload: Record<string, unknown>, options: EnqueueOptions, em?: EntityManager): Promise<string> {
    const id = options.id ?? randomUUID();
    await insertJob(this.currentEm(em), {
      id, queue: this.name, kind, payload, delaySeconds: options.delaySeconds ?? 0, maxAttempts: options.maxAttempts,
      recipientDigest: options.recipientDigest ?? null,
    });
    return id;
  }

  /**
   * Claims up to `limit` due jobs for `workerId` (oldest due first), counting one attempt each.
   * Rows locked by another worker's claim are skipped, never waited for.
   */
  async claim(workerId: string, limit: number): Promise<ClaimedJob[]> {
    const rows = await claimJobs(this.orm.em.fork(), this.name, workerId, this.leaseSeconds, limit);
    return rows.map((row) => ({ id: row.id, kind: row.kind, payload: row.payload, attempt: row.attempts, maxAttempts: row.maxAttempts, claimedBy: workerId }));
  }

  /**
   * Extends the lease of a job `workerId` still holds to {@link leaseSeconds} from now (the worker's
   * heartbeat while the job runs).
   * @returns false when the worker no longer holds the job (its lease ran out and another worker took it).
   */
  async extendLease(job: ClaimedJob, workerId: string): Promise<boolean> {
    return extendJobLease(this.orm.em.fork(), job.id, workerId, this.leaseSeconds);
  }

  /**
   * Marks a claimed job done inside the handler's own transaction `tx` (docs/events.md "Jobs"): the
   * job's row goes with the work it did, so a process killed after the commit never runs it again,
   * and a rollback keeps it. Only while its claim still holds it; the worker's own completion after
   * the handler returns then finds nothing left to do.
   */
  async completeWithin(tx: EntityManager, job: ClaimedJob): Promise<void> {
    await deleteFinishedJob(tx, job.id, job.claimedBy);
  }

  /** Removes a job that ran to completion (only while `workerId` still holds it). */
  async complete(job: ClaimedJob, workerId: string): Promise<void> {
    await deleteFinishedJob(this.orm.em.fork(), job.id, workerId);
  }

  /**
   * Records a failed run: the job runs again after `retryInSeconds`, or, with no attempt left
   * (`retryInSeconds` undefined), stays in the table with `failed_at` set for inspection.
   * @param error a short description without any secret (stored in `last_error`).
   */
  async fail(job: ClaimedJob, workerId: string, error: string, retryInSeconds: number | undefined): Promise<void> {
    const message = error.slice(0, 500);
    if (retryInSeconds === undefined) {
      await markJobFailed(this.orm.em.fork(), job.id, workerId, message);
      return;
    }
    await scheduleJobRetry(this.orm.em.fork(), job.id, workerId, message, retryInSeconds);
  }

  /**
   * Retention (docs/events.md "Retention"): deletes this queue's jobs that failed for good more than
   * `failedRetentionDays` days before `now`, and delivery-log rows (every tenant) older than
   * `deliveryRetentionDays` days, in batches of {@link RETENTION_BATCH_SIZE} (rows another sweep holds
   * are skipped, so instances sweeping together never wait on each other). Jobs that ran to
   * completion need no sweep: they are deleted when they finish.
   * @returns how many rows of each kind were deleted.
   */
  async purgeExpired(failedRetentionDays: number, deliveryRetentionDays: number, now: Date = new Date()): Promise<{ failedJobs: number; deliveries: number }> {
    const days = (n: number) => new Date(now.getTime() - n * 86_400_000);
    const batches = async (deleteBatch: (em: EntityManager) => Promise<number>): Promise<number> => {
      let total = 0;
      for (;;) {
        const deleted = await deleteBatch(this.orm.em.fork());
        total += deleted;
        if (deleted < RETENTION_BATCH_SIZE) return total;
      }
    };
    const failedBefore = days(failedRetentionDays);
    const failedJobs = await batches((em) => deleteFailedJobsBatch(em, this.name, failedBefore, RETENTION_BATCH_SIZE));
    const deliveredBefore = days(deliveryRetentionDays);
    const deliveries = await batches((em) => deleteAttemptsBatch(em, deliveredBefore, RETENTION_BATCH_SIZE));
    return { failedJobs, deliveries };
  }

  /**
   * Queue figures for the metrics and the periodic log line: waiting, due now, failed for good, and
   * the seconds the oldest due job has waited (0 when none is due).
   */
  async stats(): Promise<{ pending: number; due: number; failed: number; oldestDueSeconds: number }> {
    return jobStats(this.orm.em.fork(), this.name);
  }
}

/**
 * Seconds to wait before retry number `attempt` (1 = after the first failure): exponential from
 * `baseSeconds` (doubling each time, capped at 6 hours) with "full jitter" between half and all of it,
 * so many failing jobs do not retry in step (AWS Architecture Blog, "Exponential Backoff and Jitter").
 */
export function retryDelaySeconds(attempt: number, baseSeconds: number, random: () => number = Math.random): number {
  const capped = Math.min(baseSeconds * 2 ** Math.max(0, attempt - 1), 6 * 3600);
  return capped / 2 + (capped / 2) * random();
}
