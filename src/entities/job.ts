import { EntitySchema } from '@mikro-orm/core';

/** The kinds of job the worker runs; each has one handler (see JobWorker). */
export type JobKind = 'mail.send' | 'webhook.deliver' | 'account-mail.request' | 'users.import';

/**
 * One job of the PostgreSQL job queue (docs/events.md): run by one worker at a time under a lease,
 * deleted when it finishes, kept with `failedAt` when its attempts are used up. Written and read in
 * plain SQL only (`src/queries/job.ts`).
 */
export interface Job {
  id: string;
  queue: string;
  kind: JobKind;
  /** The handler's input (JSON); personal data in it is sealed by the keyring. */
  payload: Record<string, unknown>;
  runAt: Date;
  attempts: number;
  maxAttempts: number;
  lockedUntil: Date | null;
  lockedBy: string | null;
  lastError: string | null;
  failedAt: Date | null;
  createdAt: Date;
  /** Keyed digest of the recipient (tenant + address), so erasure finds the job without decrypting it. */
  recipientDigest: string | null;
}

export const JobSchema = new EntitySchema<Job>({
  name: 'Job',
  tableName: 'job',
  properties: {
    id: { type: 'uuid', primary: true },
    queue: { type: 'string', length: 64 },
    kind: { type: 'string', length: 64 },
    payload: { type: 'json' },
    runAt: { type: 'Date' },
    attempts: { type: 'integer' },
    maxAttempts: { type: 'integer' },
    lockedUntil: { type: 'Date', nullable: true },
    lockedBy: { type: 'string', length: 64, nullable: true },
    lastError: { type: 'string', length: 500, nullable: true },
    failedAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
    recipientDigest: { type: 'string', length: 96, nullable: true },
  },
});
