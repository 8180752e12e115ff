import { tenantProcedure, tenantSlugProcedure, userProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { router } from '../trpc.js';
import { SESSION_REASONS } from '../errors/session.js';
import { readIdempotencyKey, refreshRequestHeaders } from './idempotency-key.js';
import { deliverSession } from './session-delivery.js';
import { OK, okOutput, opaqueToken, sessionOutput, toSession } from './schemas.js';
import { REFRESH_PER_IP } from '../services/rate-limits/rate-limit-rules.js';

const tags = ['auth'];

/** Sessions: `auth/refresh` (rotation, RFC 6749 §6), `auth/logout`, `auth/logout-all` (docs/api-rules.md "Credentials and sessions"). */
export const sessionRouter = router({
  refresh: tenantSlugProcedure
    .meta({
      rateLimit: { ip: REFRESH_PER_IP },
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/refresh', protect: false, tags,
        summary: 'Exchange a refresh token for a new pair (rotation; a replayed token revokes its family)',
        description:
          'Send an `Idempotency-Key` (one per logical refresh, the same on every retry of it): a retry whose answer was lost ' +
          'gets the same pair again within 60 s, while that pair is unused, instead of revoking the session as a replay.',
        requestHeaders: refreshRequestHeaders,
        errorResponses: {
          400: 'Invalid body or Idempotency-Key', 401: 'Invalid, expired, revoked or reused token', 404: 'Unknown tenant', 429: 'Rate limited',
        },
      },
      errorReasons: {
        400: [SESSION_REASONS.invalidIdempotencyKey],
        401: ['invalid_token', 'refresh_token_reused', 'refresh_token_expired', 'session_revoked', 'email_not_verified'],
      },
    })
    .input(z.object({ refreshToken: opaqueToken }))
    .output(sessionOutput)
    .mutation(async ({ ctx, input }) => {
      const idempotencyKey = readIdempotencyKey(ctx.req);
      const { user, tokens } = await ctx.services.sessions.refresh(ctx.em, input.tenantSlug, input.refreshToken, ctx.meta, idempotencyKey);
      return deliverSession(ctx, input.tenantSlug, toSession(user, tokens), tokens.sessionId);
    }),

  logout: tenantProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/logout', protect: false, tags, summary: 'End the session of a refresh token',
        errorResponses: { 400: 'Invalid body', 404: 'Unknown tenant' },
      },
    })
    .input(z.object({ refreshToken: opaqueToken }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.sessions.endByRefreshToken(ctx.scope, input.refreshToken);
      return OK;
    }),

  logoutAll: userProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/auth/logout-all', tags, protect: true, summary: 'End every session of the signed-in user',
        errorResponses: { 401: 'Not signed in', 404: 'Unknown tenant' },
      },
    })
    .output(z.object({ ok: z.literal(true), count: z.number().int() }))
    .mutation(async ({ ctx }) => {
      const count = await ctx.services.accounts.logoutAll(ctx.scope, ctx.principal.userId);
      return { ok: true as const, count };
    }),
});
