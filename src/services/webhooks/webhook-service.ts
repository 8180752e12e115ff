import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { AuditAction } from '../../entities/audit-event.js';
import type { Tenant } from '../../entities/tenant.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import { isUuid } from '../../lib/uuid.js';
import type { Keyring } from '../../security/keyring.js';
import type { AuditService } from '../audit/audit-service.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { webhookUrlProblem } from './webhook-target.js';
import { WEBHOOK_MAX_ATTEMPTS } from '../../queries/webhook-outbox.js';
import { findAttemptsOfEndpoint } from '../../queries/webhook-delivery.js';
import {
  deleteEndpoint, findEndpoint, findEndpointsOfTenant, insertEndpoint, rotateEndpointSecret, updateEndpoint, type WebhookEndpointRow,
} from '../../queries/webhook-endpoint.js';
import { WEBHOOK_ERRORS } from '../../errors/webhook.js';

/** Seconds the previous signing secret keeps signing after a rotation (both signatures are sent). */
export const SECRET_ROTATION_OVERLAP_SECONDS = 24 * 3600;
/** Event type of the deliveries sent by "send test event". */
export const WEBHOOK_TEST_EVENT_TYPE = 'WebhookTest';
/** Most delivery attempts listed by GET webhooks/{id}/deliveries. */
export const DELIVERY_LOG_LIMIT = 100;

/** One webhook endpoint as the API shows it (never its secret). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** Audit actions delivered; null = all. */
  eventTypes: AuditAction[] | null;
  enabled: boolean;
  /** Why the service disabled the endpoint (`failing`), null when enabled or disabled by an admin. */
  disabledReason: string | null;
  /** Since when every attempt failed; null when the last one succeeded. */
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One delivery attempt of the delivery log. */
export interface WebhookDeliveryAttempt {
  id: string;
  /** The `webhook-id` header: the same for every attempt of one event. */
  messageId: string;
  eventType: string;
  attempt: number;
  /** `attempting`: the POST was about to be sent or sent, and its result never written (the instance died or the database was away). */
  outcome: 'succeeded' | 'failed' | 'attempting';
  /** HTTP status answered, null when no answer came (refused target, timeout, connection error). */
  responseStatus: number | null;
  /** Milliseconds from the request to the answer's headers. */
  latencyMs: number | null;
  error: string | null;
  /** When the next attempt is due; null after a success or the last attempt. */
  nextRetryAt: Date | null;
  createdAt: Date;
}

const toDate = (v: Date | string): Date => new Date(v);

function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    failingSince: row.failingSince ? toDate(row.failingSince) : null,
    createdAt: toDate(row.createdAt),
    updatedAt: toDate(row.updatedAt),
  };
}

/** Associated data binding an encrypted signing secret to its endpoint. */
export const secretAad = (endpointId: string): string => `webhook-secret:${endpointId}`;

/** A new signing secret in the Standard Webhooks form `whsec_<base64 of 32 random bytes>`. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Changes PATCH webhooks/{id} accepts; every field optional. */
export interface WebhookUpdate {
  url?: string;
  eventTypes?: AuditAction[] | null;
  enabled?: boolean;
}

/**
 * The tenant's webhook endpoints (docs/events.md "Webhooks"): creation with a signing secret shown
 * once, listing, update, deletion, secret rotation with an overlap, the test event and the delivery
 * log. Secrets are stored encrypted with the field-encryption keyring, never in plaintext. Changes are
 * audited as `TenantUpdated` with `details.webhook` naming the change (no secret).
 * Its changes take the request's scope first (RequestScope: the workspace, the actor, the metadata)
 * and are audited with it.
 */
export class WebhookService {
  constructor(
    private readonly config: Config,
    private readonly keyring: Keyring,
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
  ) {}

  private assertUrl(url: string): void {
    const problem = webhookUrlProblem(url, this.config.webhookAllowPrivateTargets);
    if (problem) throw WEBHOOK_ERRORS.invalidUrl({ problem });
  }

  /**
   * Creates an endpoint, enabled.
   * @param eventTypes audit actions to deliver; undefined or null = all.
   * @returns the endpoint and its signing secret `whsec_…` (never available again).
   * @throws ApiError 400 `invalid_webhook_url` (scheme, credentials, private target).
   */
  async create(scope: RequestScope, url: string, eventTypes: AuditAction[] | null | undefined): Promise<{ webhook: WebhookEndpoint; secret: string }> {
    const { em, tenant } = scope;
    this.assertUrl(url);
    const id = randomUUID();
    const secret = newSecret();
    const row = await em.transactional(async (tx) => {
      const inserted = await insertEndpoint(tx, {
        id, tenantId: tenant.id, url, eventTypes: eventTypes ? [...new Set(eventTypes)] : null, secretEncrypted: this.keyring.encrypt(secret, secretAad(id)),
      });
      await this.record(withEm(scope, tx), id, { webhook: 'created', url, eventTypes: eventTypes ?? null });
      return inserted;
    });
    return { webhook: toEndpoint(row), secret };
  }

  /** The tenant's endpoints, oldest first. */
  async list(em: EntityManager, tenant: Tenant): Promise<WebhookEndpoint[]> {
    return (await findEndpointsOfTenant(em, tenant.id)).map(toEndpoint);
  }

  /**
   * Updates url, event types and/or enabled; enabling clears the failure state.
   * @throws ApiError 404 for an unknown id, 400 `invalid_webhook_url`.
   */
  async update(scope: RequestScope, id: string, changes: WebhookUpdate): Promise<WebhookEndpoint> {
    const { em, tenant } = scope;
    if (changes.url !== undefined) this.assertUrl(changes.url);
    const current = await this.get(em, tenant, id);
    const next = {
      url: changes.url ?? current.url,
      eventTypes: changes.eventTypes === undefined ? current.eventTypes : changes.eventTypes,
      enabled: changes.enabled ?? current.enabled,
    };
    return em.transactional(async (tx) => {
      const updated = await updateEndpoint(
        tx, tenant.id, id,
        { url: next.url, eventTypes: next.eventTypes ? [...new Set(next.eventTypes)] : null, enabled: next.enabled },
        changes.enabled === true,
      );
      if (!updated) throw WEBHOOK_ERRORS.webhookNotFound();
      await this.record(withEm(scope, tx), id, { webhook: 'updated', url: next.url, eventTypes: next.eventTypes, enabled: next.enabled });
      return toEndpoint(updated);
    });
  }

  /**
   * Deletes an endpoint with its delivery log; queued deliveries to it are dropped when they run.
   * @throws ApiError 404 for an unknown id.
   */
  async delete(scope: RequestScope, id: string): Promise<void> {
    const { em, tenant } = scope;
    if (!isUuid(id)) throw WEBHOOK_ERRORS.webhookNotFound();
    await em.transactional(async (tx) => {
      if (!(await deleteEndpoint(tx, tenant.id, id))) throw WEBHOOK_ERRORS.webhookNotFound();
      await this.record(withEm(scope, tx), id, { webhook: 'deleted' });
    });
  }

  /**
   * Replaces the signing secret; the previous one keeps signing beside it for
   * SECRET_ROTATION_OVERLAP_SECONDS, so receivers can switch without losing a delivery.
   * @returns the new secret (shown once).
   * @throws ApiError 404 for an unknown id.
   */
  async rotateSecret(scope: RequestScope, id: string): Promise<string> {
    const { em, tenant } = scope;
    if (!isUuid(id)) throw WEBHOOK_ERRORS.webhookNotFound();
    const secret = newSecret();
    await em.transactional(async (tx) => {
      const rotated = await rotateEndpointSecret(tx, tenant.id, id, this.keyring.encrypt(secret, secretAad(id)), SECRET_ROTATION_OVERLAP_SECONDS);
      if (!rotated) throw WEBHOOK_ERRORS.webhookNotFound();
      await this.record(withEm(scope, tx), id, { webhook: 'secret_rotated', previousSecretValidSeconds: SECRET_ROTATION_OVERLAP_SECONDS });
    });
    return secret;
  }

  /**
   * Queues one delivery of type `WebhookTest` to this endpoint (even when disabled or filtered).
   * @throws ApiError 404 for an unknown id.
   */
  async sendTest(em: EntityManager, tenant: Tenant, id: string): Promise<void> {
    const endpoint = await this.get(em, tenant, id);
    await this.queue.enqueue(
      'webhook.deliver',
      { endpointId: endpoint.id, tenantId: tenant.id, eventType: WEBHOOK_TEST_EVENT_TYPE, test: true },
      { maxAttempts: WEBHOOK_MAX_ATTEMPTS },
      em,
    );
  }

  /**
   * The newest delivery attempts to the endpoint (at most DELIVERY_LOG_LIMIT), newest first.
   * @throws ApiError 404 for an unknown id.
   */
  async deliveries(em: EntityManager, tenant: Tenant, id: string): Promise<WebhookDeliveryAttempt[]> {
    await this.get(em, tenant, id);
    const rows = await findAttemptsOfEndpoint(em, tenant.id, id, DELIVERY_LOG_LIMIT);
    return rows.map((r) => ({ ...r, nextRetryAt: r.nextRetryAt ? toDate(r.nextRetryAt) : null, createdAt: toDate(r.createdAt) }));
  }

  /** @throws ApiError 404 when the tenant has no endpoint with this id. */
  private async get(em: EntityManager, tenant: Tenant, id: string): Promise<WebhookEndpoint> {
    if (!isUuid(id)) throw WEBHOOK_ERRORS.webhookNotFound();
    const row = await findEndpoint(em, tenant.id, id);
    if (!row) throw WEBHOOK_ERRORS.webhookNotFound();
    return toEndpoint(row);
  }

  private record(scope: RequestScope, id: string, details: Record<string, unknown>): Promise<void> {
    const action: AuditAction = 'TenantUpdated';
    return this.audit.record(scope, { action, target: { type: 'webhook', id }, details });
  }
}
