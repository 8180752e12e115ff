import { EntitySchema } from '@mikro-orm/core';
import type { ActorType } from './audit-event.js';

/** The states of an import job (docs/import.md "Import jobs"). */
export const USER_IMPORT_JOB_STATUSES = ['Receiving', 'Queued', 'Running', 'Completed', 'Failed'] as const;
export type UserImportJobStatus = (typeof USER_IMPORT_JOB_STATUSES)[number];

/** One import job of a tenant: its status and counters (POST users/import-jobs). */
export interface UserImportJob {
  id: string;
  tenantId: string;
  status: UserImportJobStatus;
  /** Lines received (non-empty). */
  total: number;
  processed: number;
  created: number;
  skipped: number;
  failed: number;
  /** Who started it (the audit actor of its `UsersImported` event). */
  actorType: ActorType;
  actorId: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export const UserImportJobSchema = new EntitySchema<UserImportJob>({
  name: 'UserImportJob',
  tableName: 'user_import_job',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    status: { type: 'string', length: 16 },
    total: { type: 'integer' },
    processed: { type: 'integer' },
    created: { type: 'integer' },
    skipped: { type: 'integer' },
    failed: { type: 'integer' },
    actorType: { type: 'string', length: 16 },
    actorId: { type: 'uuid', nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
    finishedAt: { type: 'Date', nullable: true },
  },
});

/** One received NDJSON line of a job not yet imported (it may hold a password hash; deleted once imported). */
export interface UserImportLine {
  jobId: string;
  /** Position among the job's non-empty lines, from 0 (the `index` of its error). */
  lineNo: number;
  payload: string;
}

export const UserImportLineSchema = new EntitySchema<UserImportLine>({
  name: 'UserImportLine',
  tableName: 'user_import_line',
  properties: {
    jobId: { type: 'uuid', primary: true },
    lineNo: { type: 'integer', primary: true },
    payload: { type: 'text' },
  },
});

/** One line of a job's failure report. */
export interface UserImportError {
  jobId: string;
  lineNo: number;
  reason: string;
}

export const UserImportErrorSchema = new EntitySchema<UserImportError>({
  name: 'UserImportError',
  tableName: 'user_import_error',
  properties: {
    jobId: { type: 'uuid', primary: true },
    lineNo: { type: 'integer', primary: true },
    reason: { type: 'string', length: 32 },
  },
});
