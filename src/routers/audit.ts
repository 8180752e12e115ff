import { z } from 'zod';
import { AUDIT_ACTIONS } from '../entities/audit-event.js';
import { adminProcedure } from '../middleware/auth.js';
import { rejectEmptyQueryValues } from '../middleware/empty-query-values.js';
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT } from '../services/audit/audit-log-service.js';
import { router } from '../trpc.js';
import { auditEventOutput, isoDateTime } from './schemas.js';

export const auditRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/audit', protect: true, tags: ['audit'],
        summary: 'Read the audit log, newest first',
        description:
          `\`limit\` 1 to ${AUDIT_MAX_LIMIT}, default ${AUDIT_DEFAULT_LIMIT}. \`before\` is exclusive: pass the last item's createdAt for the next page. ` +
          '`userId` matches the actor or the target. `search` (1 to 200 characters; empty is 400) matches the action, the details text ' +
          'and the email of the acting or targeted user, case-insensitively.',
        errorResponses: { 400: 'Invalid query', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 403: ['admin_required'] },
    })
    .input(
      z.object({
        action: z.enum(AUDIT_ACTIONS).optional(),
        userId: z.uuid().optional(),
        before: isoDateTime.optional(),
        limit: z.coerce.number().int().min(1).max(AUDIT_MAX_LIMIT).optional(),
        search: z.string().min(1).max(200).optional(),
      }),
    )
    .output(z.object({ items: z.array(auditEventOutput) }))
    .query(async ({ ctx, input }) => {
      // An empty `search=` must be refused, not read as "no filter" (the REST adapter drops empty values).
      rejectEmptyQueryValues(ctx.req, ['search', 'action', 'userId', 'before', 'limit']);
      const items = await ctx.services.auditLog.list(ctx.em, ctx.tenant.id, {
        action: input.action,
        userId: input.userId,
        before: input.before ? new Date(input.before) : undefined,
        search: input.search,
        limit: input.limit ?? AUDIT_DEFAULT_LIMIT,
      });
      return { items: items.map((item) => ({ ...item, createdAt: item.createdAt.toISOString() })) };
    }),
});
