import { EntitySchema } from '@mikro-orm/core';
import type { AuditAction } from './audit-event.js';

/** A tenant's webhook endpoint (docs/events.md "Webhooks"); its signing secrets are keyring ciphertexts. */
export interface WebhookEndpoint {
  id: string;
  tenantId: string;
  url: string;
  /** The event types it receives; null for every type. */
  eventTypes: AuditAction[] | null;
  enabled: boolean;
  secretEncrypted: string;
  /** The secret before the last rotation, valid until `previousSecretExpiresAt`. */
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | null;
  /** Since when every delivery failed; null while deliveries succeed. */
  failingSince: Date | null;
  /** Why it was disabled by the service (`failing`); null otherwise. */
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const WebhookEndpointSchema = new EntitySchema<WebhookEndpoint>({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoint',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    url: { type: 'string', length: 2048 },
    eventTypes: { type: 'json', nullable: true },
    enabled: { type: 'boolean' },
    secretEncrypted: { type: 'text' },
    previousSecretEncrypted: { type: 'text', nullable: true },
    previousSecretExpiresAt: { type: 'Date', nullable: true },
    failingSince: { type: 'Date', nullable: true },
    disabledReason: { type: 'string', length: 32, nullable: true },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/** How a delivery attempt ended; `attempting` while the POST is under way (or its worker died). */
export type DeliveryOutcome = 'succeeded' | 'failed' | 'attempting';

/** One delivery attempt of an event to an endpoint (docs/events.md "Delivery log"). */
export interface WebhookDelivery {
  id: string;
  tenantId: string;
  endpointId: string;
  /** `msg_<job id>`: the same on every attempt of one event. */
  messageId: string;
  eventType: string;
  attempt: number;
  outcome: DeliveryOutcome;
  responseStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  nextRetryAt: Date | null;
  createdAt: Date;
}

export const WebhookDeliverySchema = new EntitySchema<WebhookDelivery>({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    endpointId: { type: 'uuid' },
    messageId: { type: 'string', length: 64 },
    eventType: { type: 'string', length: 64 },
    attempt: { type: 'integer' },
    outcome: { type: 'string', length: 16 },
    responseStatus: { type: 'integer', nullable: true },
    latencyMs: { type: 'integer', nullable: true },
    error: { type: 'string', length: 200, nullable: true },
    nextRetryAt: { type: 'Date', nullable: true },
    createdAt: { type: 'Date' },
  },
});
