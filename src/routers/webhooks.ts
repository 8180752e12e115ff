import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../entities/audit-event.js';
import type { WebhookDeliveryAttempt, WebhookEndpoint } from '../services/webhooks/webhook-service.js';
import { router } from '../trpc.js';
import { OK, okOutput } from './schemas.js';

const tags = ['webhooks'];
const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant or webhook', 429: 'Rate limited' };
const idInput = z.object({ id: z.string().min(1).max(200) });
const eventTypes = z
  .array(z.enum(AUDIT_ACTIONS))
  .min(1)
  .max(AUDIT_ACTIONS.length)
  .meta({ description: 'Audit actions to deliver; omitted or null = all' });
const webhookUrl = z.url().max(2048).meta({ description: 'https:// target (http:// only on loopback when private targets are allowed)' });
const secretOutput = z.string().meta({ description: 'Standard Webhooks signing secret `whsec_<base64>`; shown only in this response' });

/** A webhook endpoint; never carries its secret. */
export const webhookOutput = z
  .object({
    id: z.string(),
    url: z.string(),
    eventTypes: z.array(z.enum(AUDIT_ACTIONS)).nullable(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable().meta({ description: '`failing` when the service disabled it after failing too long' }),
    failingSince: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Webhook' });

/** One delivery attempt of the delivery log. */
export const webhookDeliveryOutput = z
  .object({
    id: z.string(),
    messageId: z.string().meta({ description: 'The `webhook-id` header, the same on every attempt of one event' }),
    eventType: z.string(),
    attempt: z.number().int(),
    outcome: z.enum(['succeeded', 'failed', 'attempting']).meta({
      description: '`attempting`: the request was sent or about to be sent and its result was never recorded (an instance died); the event is sent again with the same `webhook-id`',
    }),
    responseStatus: z.number().int().nullable(),
    latencyMs: z.number().int().nullable(),
    error: z.string().nullable(),
    nextRetryAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

function toWebhookOutput(w: WebhookEndpoint): z.infer<typeof webhookOutput> {
  return {
    id: w.id, url: w.url, eventTypes: w.eventTypes, enabled: w.enabled, disabledReason: w.disabledReason,
    failingSince: w.failingSince ? w.failingSince.toISOString() : null,
    createdAt: w.createdAt.toISOString(), updatedAt: w.updatedAt.toISOString(),
  };
}

function toDeliveryOutput(d: WebhookDeliveryAttempt): z.infer<typeof webhookDeliveryOutput> {
  return { ...d, nextRetryAt: d.nextRetryAt ? d.nextRetryAt.toISOString() : null, createdAt: d.createdAt.toISOString() };
}

/** Outbound webhooks of the tenant (docs/events.md "Webhooks"). */
export const webhooksRouter = router({
  list: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/{tenantSlug}/webhooks', protect: true, tags, summary: 'List webhook endpoints', errorResponses: adminErrors } })
    .output(z.object({ items: z.array(webhookOutput) }))
    .query(async ({ ctx }) => ({ items: (await ctx.services.webhooks.list(ctx.em, ctx.tenant)).map(toWebhookOutput) })),

  create: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/webhooks', protect: true, tags,
        summary: 'Create a webhook endpoint; its signing secret is returned only in this response',
        errorResponses: { ...adminErrors, 400: 'Invalid body, or a URL that is not https or points at a private address' },
      },
      errorReasons: { 400: ['invalid_webhook_url'] },
    })
    .input(z.object({ url: webhookUrl, eventTypes: eventTypes.nullable().optional() }))
    .output(z.object({ webhook: webhookOutput, secret: secretOutput }))
    .mutation(async ({ ctx, input }) => {
      const { webhook, secret } = await ctx.services.webhooks.create(ctx.scope, input.url, input.eventTypes);
      return { webhook: toWebhookOutput(webhook), secret };
    }),

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/webhooks/{id}', protect: true, tags,
        summary: 'Change the URL, the event types or enabled; enabling clears the failure state',
        errorResponses: { ...adminErrors, 400: 'Invalid body or URL' },
      },
      errorReasons: { 400: ['invalid_webhook_url'], 404: ['not_found'] },
    })
    .input(idInput.extend({ url: webhookUrl.optional(), eventTypes: eventTypes.nullable().optional(), enabled: z.boolean().optional() }))
    .output(webhookOutput)
    .mutation(async ({ ctx, input }) => {
      const { id, ...changes } = input;
      return toWebhookOutput(await ctx.services.webhooks.update(ctx.scope, id, changes));
    }),

  delete: securityAdminProcedure
    .meta({ openapi: { method: 'DELETE', path: '/v1/{tenantSlug}/webhooks/{id}', protect: true, tags, summary: 'Delete a webhook endpoint and its delivery log', errorResponses: adminErrors }, errorReasons: { 404: ['not_found'] } })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.webhooks.delete(ctx.scope, input.id);
      return OK;
    }),

  rotateSecret: securityAdminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/webhooks/{id}/rotate-secret', protect: true, tags,
        summary: 'Replace the signing secret; the previous one keeps signing beside it for 24 hours',
        errorResponses: adminErrors,
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(z.object({ secret: secretOutput }))
    .mutation(async ({ ctx, input }) => ({ secret: await ctx.services.webhooks.rotateSecret(ctx.scope, input.id) })),

  test: adminProcedure
    .meta({
      openapi: {
        method: 'POST', path: '/v1/{tenantSlug}/webhooks/{id}/test', protect: true, tags,
        summary: 'Queue a `WebhookTest` delivery to the endpoint (also when disabled)',
        errorResponses: adminErrors,
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.webhooks.sendTest(ctx.em, ctx.tenant, input.id);
      return OK;
    }),

  deliveries: adminProcedure
    .meta({
      openapi: {
        method: 'GET', path: '/v1/{tenantSlug}/webhooks/{id}/deliveries', protect: true, tags,
        summary: 'The newest delivery attempts (at most 100), newest first', errorResponses: adminErrors,
      },
      errorReasons: { 404: ['not_found'] },
    })
    .input(idInput)
    .output(z.object({ items: z.array(webhookDeliveryOutput) }))
    .query(async ({ ctx, input }) => ({ items: (await ctx.services.webhooks.deliveries(ctx.em, ctx.tenant, input.id)).map(toDeliveryOutput) })),
});
