import { adminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../entities/audit-event.js';
import { rejectEmptyQueryValues } from '../middleware/empty-query-values.js';
import { ACTIVITY_DAYS } from '../services/audit/activity-service.js';
import { AUDIT_CSV_COLUMNS, AUDIT_EXPORT_FORMATS } from '../services/audit/audit-export-service.js';
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT } from '../services/audit/audit-log-service.js';
import { REQUEST_ERRORS } from '../lib/errors.js';
import { responseSink } from '../lib/response-sink.js';
import { router } from '../trpc.js';
import { activityOutput, auditEventOutput, isoDateTime } from './schemas.js';

export const auditRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/audit', protect: true, tags: ['audit'],
        summary: 'Read the audit log, newest first',
        description:
          `\`limit\` 1 to ${AUDIT_MAX_LIMIT}, default ${AUDIT_DEFAULT_LIMIT}. \`before\` is exclusive: pass the last item's createdAt for the next page; ` +
          '`since` is inclusive, so `since` and `before` together read a date range. ' +
          '`userId` matches the actor or the target. `search` (1 to 200 characters; empty is 400) matches the action, the details text ' +
          'and the email of the acting or targeted user, case-insensitively.',
        errorResponses: { 400: 'Invalid query', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .input(
      z.object({
        action: z.enum(AUDIT_ACTIONS).optional(),
        userId: z.uuid().optional(),
        before: isoDateTime.optional(),
        since: isoDateTime.optional().meta({ description: 'Inclusive lower bound on `createdAt` (the start of a date range)' }),
        limit: z.coerce.number().int().min(1).max(AUDIT_MAX_LIMIT).optional(),
        search: z.string().min(1).max(200).optional(),
      }),
    )
    .output(z.object({ items: z.array(auditEventOutput) }))
    .query(async ({ ctx, input }) => {
      // An empty `search=` must be refused, not read as "no filter" (the REST adapter drops empty values).
      rejectEmptyQueryValues(ctx.req, ['search', 'action', 'userId', 'before', 'since', 'limit']);
      const items = await ctx.services.auditLog.list(ctx.em, ctx.tenant.id, {
        action: input.action,
        userId: input.userId,
        before: input.before ? new Date(input.before) : undefined,
        since: input.since ? new Date(input.since) : undefined,
        search: input.search,
        limit: input.limit ?? AUDIT_DEFAULT_LIMIT,
      });
      return { items: items.map((item) => ({ ...item, createdAt: item.createdAt.toISOString() })) };
    }),

  export: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/audit/export', protect: true, tags: ['audit'],
        summary: 'Download the filtered audit log as CSV or JSON, newest first (streamed)',
        description:
          'The filters of `GET audit` without paging: every matching event, read in batches so the size of the log does not matter. ' +
          '`format=csv` (default): RFC 4180 with a header line and the columns ' + AUDIT_CSV_COLUMNS.map((c) => `\`${c}\``).join(', ') +
          ' (`details` as JSON text; a cell starting with `=`, `+`, `-`, `@`, tab or carriage return is prefixed with `\'`). ' +
          '`format=json`: an array of `AuditEvent` with `actorEmail` and `targetEmail`. Only on the REST API, not on /trpc.',
        errorResponses: { 400: 'Invalid query', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(
      z.object({
        format: z.enum(AUDIT_EXPORT_FORMATS).optional(),
        action: z.enum(AUDIT_ACTIONS).optional(),
        userId: z.uuid().optional(),
        since: isoDateTime.optional(),
        before: isoDateTime.optional(),
        search: z.string().min(1).max(200).optional(),
      }),
    )
    .output(z.null())
    .query(async ({ ctx, input }) => {
      if (ctx.req.originalUrl.startsWith('/trpc')) throw REQUEST_ERRORS.restOnly({ resource: 'export' });
      rejectEmptyQueryValues(ctx.req, ['format', 'search', 'action', 'userId', 'before', 'since']);
      const format = input.format ?? 'csv';
      const day = new Date().toISOString().slice(0, 10);
      ctx.res.status(200);
      ctx.res.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
      ctx.res.setHeader('Content-Disposition', `attachment; filename="audit-${ctx.tenant.slug}-${day}.${format}"`);
      const filter = {
        action: input.action,
        userId: input.userId,
        since: input.since ? new Date(input.since) : undefined,
        before: input.before ? new Date(input.before) : undefined,
        search: input.search,
      };
      try {
        await ctx.services.auditExport.export(ctx.em, ctx.tenant.id, filter, format, responseSink(ctx.res));
        ctx.res.end();
      } catch (err) {
        // Half a file must not look like a whole one: the connection is cut instead of ended.
        if (ctx.res.headersSent) ctx.res.destroy();
        throw err;
      }
      return null;
    }),

  activity: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/audit/activity', protect: true, tags: ['audit'],
        summary: `Sign-ins, failed sign-ins and sign-ups per day over the last ${ACTIVITY_DAYS} days, active users and MFA adoption`,
        description:
          'Days are UTC, oldest first, every day present (0 when nothing happened). Sign-ins count `UserLogin` events, failed ones ' +
          '`UserLoginFailed`, sign-ups `UserSignup`. `activeUsers` counts live users whose last sign-in is at most 7 and 30 days old; ' +
          '`mfaAdoption` counts live users who are not Pending and how many of them have TOTP, a passkey, or either.',
        errorResponses: { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(activityOutput)
    .query(({ ctx }) => ctx.services.activity.summary(ctx.em, ctx.tenant.id)),
});
