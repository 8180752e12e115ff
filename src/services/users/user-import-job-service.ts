import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { UserImportJob } from '../../entities/user-import.js';
import { NO_REQUEST_META, type RequestScope } from '../../lib/request-scope.js';
import type { ClaimedJob, JobQueue } from '../jobs/job-queue.js';
import { findLiveTenantById } from '../../queries/tenant.js';
import { insertImportErrors, findImportErrors } from '../../queries/user-import-error.js';
import {
  addImportJobProgress, deleteAbandonedImportJobs, deleteImportJob, findImportJob, finishImportJob, insertImportJob, lockImportJob, markImportJobReceived,
  touchReceivingImportJob,
} from '../../queries/user-import-job.js';
import { insertImportLines, takeImportLines } from '../../queries/user-import-line.js';
import type { ImportUserReason, UserImportService } from './user-import-service.js';
import { USER_ERRORS } from '../../errors/user.js';

/** Most lines one import job takes (the contract's 1,000,000). */
export const IMPORT_JOB_MAX_LINES = 1_000_000;
/** Longest line accepted, in bytes (a user with the longest password record fits many times). */
export const IMPORT_JOB_MAX_LINE_BYTES = 16 * 1024;
/** Lines stored per statement while receiving, and imported per transaction while running. */
export const IMPORT_JOB_CHUNK_LINES = 1000;
/**
 * Milliseconds one run of an import job works before it hands over to a new run of itself (queued in
 * its last chunk's transaction): a shutdown waits at most about this long, and a restarted service
 * resumes at the next chunk.
 */
export const IMPORT_JOB_SLICE_MS = 5000;
/** Runs allowed to one queued slice (a failing chunk is retried with the queue's backoff). */
const IMPORT_JOB_MAX_ATTEMPTS = 10;

/** The reasons of a job's failure report: the per-user ones, plus a line that is no JSON. */
export type ImportLineReason = ImportUserReason | 'invalid_json';

/** What GET users/import-jobs/{id} shows of a job. */
export type ImportJobView = Pick<UserImportJob, 'id' | 'status' | 'total' | 'processed' | 'created' | 'skipped' | 'failed' | 'createdAt' | 'finishedAt'>;

/** The queue payload of a `users.import` job. */
interface ImportJobPayload {
  tenantId: string;
  importId: string;
}

function view(job: UserImportJob): ImportJobView {
  const { id, status, total, processed, created, skipped, failed, createdAt, finishedAt } = job;
  return { id, status, total, processed, created, skipped, failed, createdAt, finishedAt };
}

/**
 * Import jobs for large files (docs/import.md "Import jobs"): the NDJSON body is streamed into
 * `user_import_line` in chunks (never held whole), then the PostgreSQL job queue imports it chunk by
 * chunk, each chunk's lines deleted and counters added in the transaction that creates its users, so
 * a job interrupted by a restart resumes where it stopped. The failure report is kept by line.
 */
/** Seconds without a received chunk after which a job still `Receiving` counts as abandoned. */
export const IMPORT_RECEIVE_IDLE_SECONDS = 900;

export class UserImportJobService {
  constructor(
    private readonly orm: MikroORM,
    private readonly queue: JobQueue,
    private readonly importer: UserImportService,
    private readonly sliceMs: number = IMPORT_JOB_SLICE_MS,
  ) {}

  /**
   * Receives an NDJSON body (one user a line, as in POST users/import; empty lines ignored) into a
   * new job of the scope's workspace and queues it; the scope's actor is the job's uploader, the
   * actor of its `UsersImported` event. Lines are stored {@link IMPORT_JOB_CHUNK_LINES} at a time as
   * they arrive.
   * @returns the queued job.
   * @throws ApiError 413 `import_too_many_lines` past {@link IMPORT_JOB_MAX_LINES} lines, 400
   *   `import_line_too_long` for a line over {@link IMPORT_JOB_MAX_LINE_BYTES} bytes, 400
   *   `import_empty` without any line; the job is then deleted.
   */
  async receive(scope: RequestScope, body: AsyncIterable<Buffer | string>): Promise<ImportJobView> {
    const { em, tenant, actor } = scope;
    const now = new Date();
    const job: UserImportJob = {
      id: randomUUID(), tenantId: tenant.id, status: 'Receiving', total: 0, processed: 0, created: 0, skipped: 0, failed: 0,
      actorType: actor.type, actorId: actor.id, createdAt: now, updatedAt: now, finishedAt: null,
    };
    await insertImportJob(em, job);
    try {
      let total = 0;
      let pending: string[] = [];
      const flush = async () => {
        await insertImportLines(em, pending.map((payload, i) => ({ jobId: job.id, lineNo: total - pending.length + i, payload })));
        await touchReceivingImportJob(em, tenant.id, job.id, new Date());
        pending = [];
      };
      for await (const line of ndjsonLines(body)) {
        if (total >= IMPORT_JOB_MAX_LINES) throw USER_ERRORS.importTooManyLines({ maxLines: IMPORT_JOB_MAX_LINES });
        pending.push(line);
        total += 1;
        if (pending.length >= IMPORT_JOB_CHUNK_LINES) await flush();
      }
      await flush();
      if (total === 0) throw USER_ERRORS.importEmpty();
      await em.transactional(async (tx) => {
        await markImportJobReceived(tx, tenant.id, job.id, total);
        await this.queue.enqueue('users.import', { tenantId: tenant.id, importId: job.id } satisfies ImportJobPayload, { maxAttempts: IMPORT_JOB_MAX_ATTEMPTS }, tx);
      });
      return { ...view(job), status: 'Queued', total };
    } catch (err) {
      await deleteImportJob(em, tenant.id, job.id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * The retention sweep's part (docs/import.md "Import jobs"): deletes the jobs whose body stopped
   * arriving {@link IMPORT_RECEIVE_IDLE_SECONDS} ago or more, with their lines.
   * @returns how many were deleted.
   */
  async sweepAbandoned(now = new Date()): Promise<number> {
    return deleteAbandonedImportJobs(this.orm.em.fork() as EntityManager, new Date(now.getTime() - IMPORT_RECEIVE_IDLE_SECONDS * 1000));
  }

  /**
   * The tenant's job with its counters.
   * @throws ApiError 404 `not_found` for an unknown id or another tenant's job.
   */
  async get(em: EntityManager, tenantId: string, jobId: string): Promise<ImportJobView> {
    const job = await findImportJob(em, tenantId, jobId);
    if (!job) throw USER_ERRORS.importJobNotFound();
    return view(job);
  }

  /**
   * Streams a job's failure report: one `{"index", "reason"}` JSON object a line, by line number.
   * @throws ApiError 404 `not_found` for an unknown id or another tenant's job.
   */
  async writeErrors(em: EntityManager, tenantId: string, jobId: string, sink: { write(chunk: string): Promise<void> }): Promise<void> {
    if (!(await findImportJob(em, tenantId, jobId))) throw USER_ERRORS.importJobNotFound();
    let after = -1;
    for (;;) {
      const page = await findImportErrors(em, jobId, after, IMPORT_JOB_CHUNK_LINES);
      if (page.length === 0) return;
      await sink.write(page.map((e) => `${JSON.stringify({ index: e.lineNo, reason: e.reason })}\n`).join(''));
      after = page[page.length - 1]!.lineNo;
      if (page.length < IMPORT_JOB_CHUNK_LINES) return;
    }
  }

  /**
   * The `users.import` job handler: imports chunks of {@link IMPORT_JOB_CHUNK_LINES} lines, each in
   * one transaction (users, failure report, counters, the lines' deletion), for about
   * {@link sliceMs}; then queues its continuation in the last chunk's transaction and returns. With
   * no line left the job is `Completed` and its one `UsersImported` event is written.
   */
  async run(claimed: ClaimedJob): Promise<void> {
    const payload = claimed.payload as unknown as ImportJobPayload;
    const started = Date.now();
    const em = this.orm.em.fork() as EntityManager;
    const tenant = await findLiveTenantById(em, payload.tenantId);
    for (;;) {
      const more = await em.transactional(async (tx) => {
        const job = await lockImportJob(tx, payload.tenantId, payload.importId);
        if (!job || job.status === 'Completed' || job.status === 'Failed') return false;
        if (!tenant) {
          await finishImportJob(tx, payload.tenantId, job.id, 'Failed');
          return false;
        }
        const lines = await takeImportLines(tx, job.id, job.processed, IMPORT_JOB_CHUNK_LINES);
        if (lines.length === 0) {
          await finishImportJob(tx, tenant.id, job.id, 'Completed');
          // the job's event: the uploader as actor, no request behind it
          const uploader = { em: tx, tenant, actor: { type: job.actorType, id: job.actorId }, meta: NO_REQUEST_META };
          await this.importer.recordImport(uploader, 'job', { total: job.total, created: job.created, skipped: job.skipped, failed: job.failed }, job.id);
          return false;
        }
        await this.importChunk(tx, tenant, job.id, lines);
        if (Date.now() - started < this.sliceMs) return true;
        await this.queue.enqueue('users.import', { ...payload }, { maxAttempts: IMPORT_JOB_MAX_ATTEMPTS }, tx);
        return false;
      });
      if (!more) return;
    }
  }

  /** Imports one chunk of lines: a line that is no JSON is reported as `invalid_json`. */
  private async importChunk(tx: EntityManager, tenant: Tenant, jobId: string, lines: { lineNo: number; payload: string }[]): Promise<void> {
    const errors: { lineNo: number; reason: ImportLineReason }[] = [];
    const users: unknown[] = [];
    const lineNos: number[] = [];
    for (const line of lines) {
      try {
        users.push(JSON.parse(line.payload));
        lineNos.push(line.lineNo);
      } catch {
        errors.push({ lineNo: line.lineNo, reason: 'invalid_json' });
      }
    }
    const outcome = await this.importer.importBatch(tx, tenant, users);
    for (const error of outcome.errors) errors.push({ lineNo: lineNos[error.index]!, reason: error.reason });
    await insertImportErrors(tx, errors.map((e) => ({ jobId, lineNo: e.lineNo, reason: e.reason })));
    await addImportJobProgress(tx, tenant.id, jobId, { processed: lines.length, created: outcome.created, skipped: outcome.skipped, failed: errors.length });
  }
}

/**
 * Splits a streamed body into its non-empty lines (LF or CRLF), decoding UTF-8 across chunk
 * boundaries, without holding more than one line.
 * @throws ApiError 400 `import_line_too_long` for a line over {@link IMPORT_JOB_MAX_LINE_BYTES}.
 */
export async function* ndjsonLines(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  const tooLong = () => USER_ERRORS.importLineTooLong({ maxLineBytes: IMPORT_JOB_MAX_LINE_BYTES });
  for await (const chunk of body) {
    rest += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let start = 0;
    let newline = rest.indexOf('\n', start);
    while (newline >= 0) {
      const line = rest.slice(start, rest[newline - 1] === '\r' ? newline - 1 : newline);
      start = newline + 1;
      if (Buffer.byteLength(line) > IMPORT_JOB_MAX_LINE_BYTES) throw tooLong();
      if (line.trim() !== '') yield line;
      newline = rest.indexOf('\n', start);
    }
    rest = rest.slice(start);
    if (Buffer.byteLength(rest) > IMPORT_JOB_MAX_LINE_BYTES) throw tooLong();
  }
  rest += decoder.end();
  const last = rest.replace(/\r$/, '');
  if (Buffer.byteLength(last) > IMPORT_JOB_MAX_LINE_BYTES) throw tooLong();
  if (last.trim() !== '') yield last;
}
