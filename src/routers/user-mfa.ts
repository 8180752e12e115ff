import { z } from 'zod';
import { adminProcedure } from '../middleware/auth.js';
import { router } from '../trpc.js';
import { OK, okOutput } from './schemas.js';

const tags = ['users'];

/** Second-factor administration of a tenant's users (Admin or API key). */
export const userMfaRouter = router({
  disableTotp: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/users/{userId}/totp/disable', tags, protect: true,
        summary: "Remove a user's TOTP factor (active and pending); idempotent",
        errorResponses: { 401: 'Not signed in', 403: 'Not an admin', 404: 'Unknown tenant or user', 429: 'Rate limited' },
      },
    })
    .input(z.object({ userId: z.string().min(1) }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.totp.disable(ctx.em, ctx.tenant, input.userId, ctx.actor, ctx.meta);
      return OK;
    }),
});
