import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { retryDelaySeconds, type ClaimedJob, type JobKind, type JobQueue } from './job-queue.js';

/**
 * Runs one job; throwing means "failed" (the message is logged and stored, never a secret).
 * `retryInSeconds` says when the job runs again if this run fails; undefined on its last attempt.
 */
export type JobHandler = (job: ClaimedJob, retryInSeconds: number | undefined) => Promise<void>;

/** Jobs one worker runs at the same time. */
const CONCURRENCY = 5;
/** Seconds between two metrics log lines of the queue. */
const METRICS_INTERVAL_SECONDS = 60;
/**
 * Tries to write a job's outcome (complete or fail) before giving up: with the backoff of
 * {@link outcomeRetryDelayMs} about 45 s in all, longer than a PostgreSQL restart. A job whose outcome
 * could not be written runs again once its lease ran out.
 */
export const OUTCOME_WRITE_ATTEMPTS = 12;

/** Milliseconds before outcome write number `attempt + 1`: 250 ms doubling, at most 5 s. */
export function outcomeRetryDelayMs(attempt: number): number {
  return Math.min(250 * 2 ** (attempt - 1), 5000);
}

/**
 * Runs a database write that records something already done (a job's outcome, a delivery's result),
 * retrying it with {@link outcomeRetryDelayMs} up to {@link OUTCOME_WRITE_ATTEMPTS} times while it fails.
 * @param onRetry told of each failed attempt before the wait.
 * @throws the last attempt's error when every attempt failed.
 */
export async function writeWithRetries<T>(write: () => Promise<T>, onRetry?: (err: unknown, attempt: number) => void): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= OUTCOME_WRITE_ATTEMPTS) throw err;
      onRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, outcomeRetryDelayMs(attempt)));
    }
  }
}

/** Options of {@link JobWorker}. */
export interface JobWorkerOptions {
  /** Milliseconds between two polls when the queue had nothing due. */
  pollIntervalMs: number;
  /** Seconds before the first retry; doubled each time with jitter (see retryDelaySeconds). */
  retryBaseSeconds: number;
  /** Told of every run's outcome (the metrics): completed, retry (failed, runs again) or failed (for good). */
  onRun?: (kind: JobKind, outcome: 'completed' | 'retry' | 'failed') => void;
}

interface PeriodicTask {
  name: string;
  intervalMs: number;
  run: () => Promise<void>;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

/**
 * The in-process worker of the job queue (docs/events.md): polls for due jobs, runs each with the
 * handler registered for its kind, deletes it on success, schedules a retry (exponential backoff with
 * jitter) on failure, and logs queue figures once a minute (`job queue metrics`). Several workers
 * (instances, `npm run worker`) share one queue safely.
 */
export class JobWorker {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly handlers = new Map<JobKind, JobHandler>();
  private readonly running = new Set<Promise<void>>();
  private readonly periodic: PeriodicTask[] = [];
  private timer: NodeJS.Timeout | undefined;
  private metricsTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  private polling: Promise<void> | undefined;
  private nextDelayMs = 0;

  constructor(
    private readonly queue: JobQueue,
    private readonly logger: Logger,
    private readonly options: JobWorkerOptions,
  ) {}

  /** Registers the handler of one job kind (one per kind). */
  handle(kind: JobKind, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /**
   * Registers a task the worker runs every `intervalSeconds` while it is started (the retention
   * sweep): the first run after a random part of the interval, so instances started together do not
   * run it together; one run at a time; a failure is logged and the task runs again at the next
   * interval. `intervalSeconds` 0 registers nothing.
   */
  every(intervalSeconds: number, name: string, run: () => Promise<void>): void {
    if (intervalSeconds > 0) this.periodic.push({ name, intervalMs: intervalSeconds * 1000, run });
  }

  /** Starts polling (and the metrics log line, and the periodic tasks). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
    for (const task of this.periodic) this.armPeriodic(task, Math.random() * task.intervalMs);
    this.metricsTimer = setInterval(() => void this.logMetrics(), METRICS_INTERVAL_SECONDS * 1000);
    this.metricsTimer.unref();
  }

  /** Stops polling and waits for the jobs in progress (each bounded by its own timeouts). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.metricsTimer);
    for (const task of this.periodic) clearTimeout(task.timer);
    await this.polling;
    await Promise.allSettled([...this.running, ...this.periodic.map((task) => task.running)]);
  }

  private armPeriodic(task: PeriodicTask, delayMs: number): void {
    task.timer = setTimeout(() => {
      task.running = task
        .run()
        .catch((err: unknown) => this.logger.error({ err, task: task.name }, 'periodic job-queue task failed'))
        .finally(() => {
          task.running = undefined;
          if (!this.stopped) this.armPeriodic(task, task.intervalMs);
        });
    }, delayMs);
    task.timer.unref();
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.polling) return; // a poll in progress schedules the next one itself
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.polling = this.poll().finally(() => {
        this.polling = undefined;
        this.schedule(this.nextDelayMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    let claimed: ClaimedJob[] = [];
    const free = CONCURRENCY - this.running.size;
    if (free > 0) {
      try {
        claimed = await this.queue.claim(this.workerId, free);
      } catch (err) {
        this.logger.warn({ err }, 'job queue poll failed');
      }
    }
    for (const job of claimed) {
      const run = this.run(job).finally(() => {
        this.running.delete(run);
        this.schedule(0);
      });
      this.running.add(run);
    }
    this.nextDelayMs = claimed.length > 0 && claimed.length === free ? 0 : this.options.pollIntervalMs;
  }

  /**
   * Runs one job under a heartbeat that extends its lease every third of it, then records the
   * outcome. The handler's failure and the outcome's writing are apart: a job that did its work while
   * the database was away is still recorded as done once it is back (retried with backoff), instead
   * of running again when its lease runs out.
   */
  private async run(job: ClaimedJob): Promise<void> {
    const handler = this.handlers.get(job.kind);
    const retryIn = job.attempt < job.maxAttempts ? retryDelaySeconds(job.attempt, this.options.retryBaseSeconds) : undefined;
    const heartbeat = setInterval(() => {
      this.queue.extendLease(job, this.workerId).then(
        (held) => {
          if (!held) this.logger.warn({ jobId: job.id, kind: job.kind }, 'job lease lost: another worker may run this job');
        },
        (err: unknown) => this.logger.debug({ err, jobId: job.id }, 'job lease not extended'),
      );
    }, (this.queue.leaseSeconds * 1000) / 3);
    heartbeat.unref();
    try {
      let failure: string | undefined;
      try {
        if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
        await handler(job, retryIn);
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      }
      this.options.onRun?.(job.kind, failure === undefined ? 'completed' : retryIn === undefined ? 'failed' : 'retry');
      if (failure === undefined) {
        await this.recordOutcome(job, 'complete', () => this.queue.complete(job, this.workerId));
        return;
      }
      this.logger.warn(
        { jobId: job.id, kind: job.kind, attempt: job.attempt, maxAttempts: job.maxAttempts, retryInSeconds: retryIn, error: failure },
        retryIn === undefined ? 'job failed for good' : 'job failed, will retry',
      );
      await this.recordOutcome(job, 'fail', () => this.queue.fail(job, this.workerId, failure, retryIn));
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Writes a job's outcome, retrying with backoff ({@link writeWithRetries}) while the database is away. */
  private async recordOutcome(job: ClaimedJob, outcome: 'complete' | 'fail', write: () => Promise<void>): Promise<void> {
    let retried = 0;
    try {
      await writeWithRetries(write, (err, attempt) => {
        retried = attempt;
        this.logger.warn({ err, jobId: job.id, kind: job.kind, outcome, attempt }, 'job outcome not recorded yet; retrying');
      });
      if (retried > 0) this.logger.info({ jobId: job.id, kind: job.kind, outcome, attempts: retried + 1 }, 'job outcome recorded after retries');
    } catch (err) {
      this.logger.error({ err, jobId: job.id, kind: job.kind, outcome }, 'could not record a job outcome; the job runs again when its lease ends');
    }
  }

  private async logMetrics(): Promise<void> {
    try {
      this.logger.info({ queue: await this.queue.stats() }, 'job queue metrics');
    } catch (err) {
      this.logger.warn({ err }, 'job queue metrics unavailable');
    }
  }
}
