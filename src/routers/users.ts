import { z } from 'zod';
import { adminProcedure } from '../middleware/auth.js';
import { router } from '../trpc.js';
import { OK, okOutput, toUserOutput, userOutput } from './schemas.js';

const tags = ['users'];

export const usersRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/users', protect: true, tags, summary: 'List the live users of the tenant, oldest first',
        errorResponses: { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
    })
    .output(z.object({ items: z.array(userOutput) }))
    .query(async ({ ctx }) => {
      const users = await ctx.services.userDirectory.list(ctx.em, ctx.tenant.id);
      return { items: users.map((user) => toUserOutput(user, ctx.tenant)) };
    }),

  delete: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/users/{userId}', protect: true, tags,
        summary: 'Delete (soft) a user: every session ends at once; the last active admin cannot be deleted',
        errorResponses: {
          400: 'userId is not a UUID', 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or user',
          409: 'Last active admin (`last_admin`)', 429: 'Rate limited',
        },
      },
    })
    .input(z.object({ userId: z.uuid() }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.accounts.softDelete(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return OK;
    }),
});
