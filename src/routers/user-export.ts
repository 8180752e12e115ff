import { z } from 'zod';
import { USER_ROLES, USER_STATUSES } from '../entities/user.js';
import type { UserDataExport } from '../services/lifecycle/data-export-service.js';
import type { RequestContext } from '../context.js';

/** OpenAPI tag of the personal-data and tenant-deletion operations. */
export const dataProtectionTags = ['data protection'];

const timestamp = z.string().meta({ description: 'ISO 8601 date-time' });
const nullableTimestamp = timestamp.nullable();

/** GDPR art. 15/20 export of one user (see DataExportService). */
export const userExportOutput = z
  .object({
    format: z.literal('tenant-identity.user-export.v1'),
    exportedAt: timestamp,
    user: z.object({
      id: z.string(),
      email: z.string(),
      status: z.enum(USER_STATUSES),
      role: z.enum(USER_ROLES),
      createdAt: timestamp,
      updatedAt: timestamp,
      lastLoginAt: nullableTimestamp,
      emailVerifiedAt: nullableTimestamp,
      deletedAt: nullableTimestamp,
    }),
    tenant: z.object({ id: z.string(), slug: z.string(), name: z.string() }),
    mfa: z.object({ totpEnrolled: z.boolean(), totpEnrolledAt: nullableTimestamp }).meta({ description: 'Secrets are never exported' }),
    sessions: z.array(
      z.object({
        id: z.string(),
        createdAt: timestamp,
        lastRefreshedAt: nullableTimestamp,
        revokedAt: nullableTimestamp,
        revokedReason: z.string().nullable(),
        ip: z.string().nullable(),
        userAgent: z.string().nullable(),
      }),
    ),
    idpLinks: z.array(
      z.object({ issuer: z.string(), subject: z.string(), email: z.string().nullable(), createdAt: timestamp, lastLoginAt: nullableTimestamp }),
    ),
    auditEvents: z.array(
      z.object({
        id: z.string(),
        action: z.string(),
        actorType: z.string(),
        actorId: z.string().nullable(),
        targetType: z.string().nullable(),
        targetId: z.string().nullable(),
        ip: z.string().nullable(),
        userAgent: z.string().nullable(),
        details: z.record(z.string(), z.unknown()),
        createdAt: timestamp,
      }),
    ),
  })
  .meta({ id: 'UserDataExport' });

/** Lets a browser save the export as a file. */
export function asAttachment(ctx: RequestContext, data: UserDataExport): UserDataExport {
  ctx.res.setHeader('Content-Disposition', `attachment; filename="user-export-${data.user.id}.json"`);
  return data;
}
