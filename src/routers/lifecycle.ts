import { z } from 'zod';
import { USER_ROLES, USER_STATUSES } from '../entities/user.js';
import { unauthorized } from '../lib/errors.js';
import { adminProcedure, userProcedure } from '../middleware/auth.js';
import type { UserDataExport } from '../services/data-export-service.js';
import { router, type RequestContext } from '../trpc.js';
import { OK, okOutput } from './schemas.js';

const tags = ['data protection'];

const timestamp = z.string().meta({ description: 'ISO 8601 date-time' });
const nullableTimestamp = timestamp.nullable();

/** GDPR art. 15/20 export of one user (see DataExportService). */
const userExportOutput = z
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
function asAttachment(ctx: RequestContext, data: UserDataExport): UserDataExport {
  ctx.res.setHeader('Content-Disposition', `attachment; filename="user-export-${data.user.id}.json"`);
  return data;
}

/** Personal-data export (GDPR art. 15/20) and tenant deletion. */
export const lifecycleRouter = router({
  exportMe: userProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/me/export', tags, protect: true,
        summary: 'Download everything held about the signed-in user as JSON (GDPR art. 15/20)',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(userExportOutput)
    .query(async ({ ctx }) => {
      const data = await ctx.services.dataExport.exportUser(ctx.em, ctx.tenant, ctx.principal.userId, 'self', ctx.actor, ctx.meta);
      return asAttachment(ctx, data);
    }),

  exportUser: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users/{userId}/export', tags, protect: true,
        summary: 'Download everything held about a user of the tenant as JSON (admin; soft-deleted users included until erased)',
        errorResponses: { 400: 'Invalid user id', 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(userExportOutput)
    .query(async ({ ctx, input }) => {
      const data = await ctx.services.dataExport.exportUser(ctx.em, ctx.tenant, input.userId, 'admin', ctx.actor, ctx.meta);
      return asAttachment(ctx, data);
    }),

  deleteTenant: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/tenant', tags, protect: true,
        summary: 'Delete (soft) the tenant: every session ends and its routes answer 404; data is erased after USER_RETENTION_DAYS',
        description: 'Needs an Admin user access token; an API key gets 401 `user_token_required`.',
        errorResponses: { 401: 'Not signed in, or an API key', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      if (ctx.principal.kind !== 'user') {
        throw unauthorized('user_token_required', 'Deleting the tenant needs an Admin user access token, not an API key');
      }
      await ctx.services.erasure.softDeleteTenant(ctx.em, ctx.tenant, ctx.actor, ctx.meta);
      return OK;
    }),
});
