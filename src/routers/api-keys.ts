import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { API_KEY_ENVIRONMENTS, type ApiKey } from '../entities/api-key.js';
import { router } from '../trpc.js';
import { displayName, isoDateTime, OK, okOutput, queryBoolean, timestampOutput } from './schemas.js';

const tags = ['api-keys'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or key', 429: 'Rate limited' };

/** The API key as the API shows it (docs/api-rules.md "Resources"); never carries the key or its hash. */
export const apiKeyOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    environment: z.enum(API_KEY_ENVIRONMENTS),
    prefix: z.string().meta({ description: 'First 12 characters of the key, to recognise it' }),
    createdAt: timestampOutput,
    expiresAt: timestampOutput.nullable(),
    lastUsedAt: timestampOutput.nullable().meta({ description: 'Updated at most once a minute' }),
    revokedAt: timestampOutput.nullable(),
    createdBy: z.string().nullable().meta({
      description:
        'Id of the Admin user (or the live API key) that minted it. Keys belong to the tenant and outlive their minter: revoke ' +
        'the keys an Admin minted when removing that Admin (docs/security.md "API keys")',
    }),
  })
  .meta({ id: 'ApiKey' });

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

function toApiKeyOutput(key: ApiKey): z.infer<typeof apiKeyOutput> {
  return {
    id: key.id,
    name: key.name,
    environment: key.environment,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    revokedAt: iso(key.revokedAt),
    createdBy: key.createdBy,
  };
}

export const apiKeysRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/api-keys', protect: true, tags,
        summary: 'List API keys, newest first (revoked ones on request)',
        errorResponses: { ...adminErrors, 400: 'Invalid query' },
      },
    })
    .input(z.object({ includeRevoked: queryBoolean.optional() }))
    .output(z.object({ items: z.array(apiKeyOutput) }))
    .query(async ({ ctx, input }) => {
      const keys = await ctx.services.apiKeys.list(ctx.em, ctx.tenant, input.includeRevoked ?? false);
      return { items: keys.map(toApiKeyOutput) };
    }),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/api-keys', protect: true, tags,
        summary: 'Create an API key; the plaintext is returned only in this response',
        errorResponses: { ...adminErrors, 400: 'Invalid body or expiresAt not in the future' },
      },
      errorReasons: { 400: ['expires_at_in_past'] },
    })
    .input(
      z.object({
        name: displayName(120),
        environment: z.enum(API_KEY_ENVIRONMENTS),
        expiresAt: isoDateTime.optional(),
      }),
    )
    .output(z.object({ plaintext: z.string().meta({ description: '`ak_live_…` or `ak_test_…`; shown once' }), apiKey: apiKeyOutput }))
    .mutation(async ({ ctx, input }) => {
      const { apiKey, plaintext } = await ctx.services.apiKeys.create(
        ctx.scope,
        { name: input.name, environment: input.environment, expiresAt: input.expiresAt ? new Date(input.expiresAt) : undefined },
      );
      return { plaintext, apiKey: toApiKeyOutput(apiKey) };
    }),

  revoke: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/api-keys/{id}', protect: true, tags,
        summary: 'Revoke an API key; it is refused from the next request on',
        errorResponses: adminErrors,
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(z.object({ id: z.string().min(1).max(200) }))
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.apiKeys.revoke(ctx.scope, input.id);
      return OK;
    }),
});
