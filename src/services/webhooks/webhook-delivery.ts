import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { Keyring } from '../../security/keyring.js';
import { findAuditEvent } from '../../queries/audit-event.js';
import type { ClaimedJob } from '../jobs/job-queue.js';
import { writeWithRetries } from '../jobs/job-worker.js';
import type { Mailer } from '../mail/mailer.js';
import { assertLiteralHostAllowed, guardedLookup } from './webhook-target.js';
import { secretAad, WEBHOOK_TEST_EVENT_TYPE } from './webhook-service.js';
import { findAdminRecipients } from '../../queries/user.js';
import { findLiveTenantById } from '../../queries/tenant.js';
import { mailTranslator } from '../mail/mail-i18n.js';
import { renderMail } from '../mail/mail-layout.js';
import { finishAttempt, insertAttempt } from '../../queries/webhook-delivery.js';
import {
  clearEndpointFailing, disableFailingEndpoint, findEndpointSecrets, markEndpointFailing, type EndpointSecrets,
} from '../../queries/webhook-endpoint.js';

/** Milliseconds one delivery attempt may take, connection to answer headers. */
export const DELIVERY_TIMEOUT_MS = 10_000;

const payloadSchema = z.object({
  endpointId: z.string(),
  tenantId: z.string(),
  eventType: z.string(),
  auditEventId: z.string().optional(),
  test: z.boolean().optional(),
});

interface AttemptResult {
  status: number | null;
  latencyMs: number | null;
  error: string | null;
}

/**
 * Delivers one event to one endpoint: the job handler of `webhook.deliver` (docs/events.md
 * "Webhooks"). The request follows the Standard Webhooks specification: JSON body
 * `{type, timestamp, data}`, headers `webhook-id` (`msg_<job id>`, the same on every retry, for
 * de-duplication), `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature`
 * (HMAC-SHA256 by the `standardwebhooks` library; during a secret rotation's overlap, one signature
 * per secret). Each attempt has a 10 s timeout, follows no redirect, refuses non-public targets unless
 * `WEBHOOK_ALLOW_PRIVATE_TARGETS`, and is written to the delivery log (an `attempting` row before the
 * POST, finished with its result after it). Any answer other than 2xx is a
 * failure and is retried by the queue; an endpoint failing for `WEBHOOK_DISABLE_AFTER_SECONDS` is
 * disabled and the tenant's admins are mailed.
 */
export class WebhookDelivery {
  constructor(
    private readonly config: Config,
    private readonly orm: MikroORM,
    private readonly keyring: Keyring,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    /** Told of every attempt's outcome (the metrics). */
    private readonly onAttempt?: (outcome: 'succeeded' | 'failed') => void,
  ) {}

  /**
   * Runs one attempt.
   * @param retryInSeconds when the queue will try again if this attempt fails; undefined on the last.
   * @throws Error when the attempt failed (the queue retries it).
   */
  async deliver(job: ClaimedJob, retryInSeconds: number | undefined): Promise<void> {
    const payload = payloadSchema.parse(job.payload);
    const em = this.orm.em.fork() as EntityManager;
    const endpoint = await findEndpointSecrets(em, payload.tenantId, payload.endpointId);
    if (!endpoint || (!endpoint.enabled && !payload.test)) return; // deleted or disabled: dropped
    const body = await this.body(em, payload);
    if (!body) return; // the audit event was erased meanwhile
    const messageId = `msg_${job.id}`;
    // The log row is written before the POST and finished after it: a crash in between leaves an
    // `attempting` row (the receiver may have the event; the queue sends it again with the same
    // webhook-id), never a delivery without a trace. No row, no POST.
    const deliveryId = randomUUID();
    await insertAttempt(em, {
      id: deliveryId, tenantId: payload.tenantId, endpointId: payload.endpointId, messageId, eventType: payload.eventType, attempt: job.attempt,
    });
    const result = await this.post(payload.endpointId, endpoint, messageId, body);
    const succeeded = result.status !== null && result.status >= 200 && result.status < 300;
    this.onAttempt?.(succeeded ? 'succeeded' : 'failed');
    await writeWithRetries(
      () =>
        finishAttempt(em, deliveryId, {
          outcome: succeeded ? 'succeeded' : 'failed', responseStatus: result.status, latencyMs: result.latencyMs,
          error: result.error?.slice(0, 200) ?? null,
          nextRetryAt: succeeded || retryInSeconds === undefined ? null : new Date(Date.now() + retryInSeconds * 1000),
        }),
      (err, attempt) => this.logger.warn({ err, deliveryId, attempt }, 'webhook delivery log not finished yet; retrying'),
    );
    if (succeeded) {
      await clearEndpointFailing(em, payload.tenantId, payload.endpointId)
        .catch((err: unknown) => this.logger.warn({ err, endpointId: payload.endpointId }, 'could not clear the endpoint failing mark'));
      return;
    }
    await this.noteFailure(em, payload.endpointId, payload.tenantId);
    throw new Error(result.error ?? `endpoint answered ${result.status}`);
  }

  private async body(em: EntityManager, payload: z.infer<typeof payloadSchema>): Promise<string | undefined> {
    if (payload.test || !payload.auditEventId) {
      return JSON.stringify({ type: WEBHOOK_TEST_EVENT_TYPE, timestamp: new Date().toISOString(), data: { webhookId: payload.endpointId } });
    }
    const item = await findAuditEvent(em, payload.tenantId, payload.auditEventId);
    if (!item) return undefined;
    return JSON.stringify({ type: item.action, timestamp: item.createdAt.toISOString(), data: { ...item, createdAt: item.createdAt.toISOString() } });
  }

  private signature(endpoint: EndpointSecrets, endpointId: string, messageId: string, timestamp: Date, body: string): string {
    const secrets = [this.keyring.decrypt(endpoint.secretEncrypted, secretAad(endpointId))];
    if (endpoint.previousSecretEncrypted && endpoint.previousSecretValid) {
      secrets.push(this.keyring.decrypt(endpoint.previousSecretEncrypted, secretAad(endpointId)));
    }
    return secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' ');
  }

  private post(endpointId: string, endpoint: EndpointSecrets, messageId: string, body: string): Promise<AttemptResult> {
    const allowPrivate = this.config.webhookAllowPrivateTargets;
    let url: URL;
    try {
      url = new URL(endpoint.url);
      assertLiteralHostAllowed(url, allowPrivate);
    } catch (err) {
      return Promise.resolve({ status: null, latencyMs: null, error: err instanceof Error ? err.message : 'invalid target' });
    }
    const timestamp = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'tenant-identity-webhooks/1',
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': this.signature(endpoint, endpointId, messageId, timestamp, body),
    };
    const client = url.protocol === 'https:' ? https : http;
    const started = performance.now();
    return new Promise<AttemptResult>((resolve) => {
      const request = client.request(url, {
        method: 'POST',
        headers,
        lookup: guardedLookup(allowPrivate),
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        agent: false,
      }, (response) => {
        const latencyMs = Math.round(performance.now() - started);
        response.resume(); // the body is not used; redirects are not followed
        resolve({ status: response.statusCode ?? null, latencyMs, error: null });
      });
      request.on('error', (err: Error) => {
        const reason = err.name === 'AbortError' || err.name === 'TimeoutError' ? `timed out after ${DELIVERY_TIMEOUT_MS} ms` : err.message;
        resolve({ status: null, latencyMs: null, error: reason });
      });
      request.end(body);
    });
  }

  /**
   * Marks the endpoint failing (since its first failed attempt in a row); once that lasts
   * `WEBHOOK_DISABLE_AFTER_SECONDS`, disables it and mails the tenant's admins.
   */
  private async noteFailure(em: EntityManager, endpointId: string, tenantId: string): Promise<void> {
    const state = await markEndpointFailing(em, tenantId, endpointId, this.config.webhookDisableAfterSeconds);
    if (!state?.overdue || !state.enabled) return;
    const disabled = await em.transactional(async (tx) => {
      const disabledEndpoint = await disableFailingEndpoint(tx, tenantId, endpointId);
      if (!disabledEndpoint) return false; // another worker disabled it first
      const tenant = await findLiveTenantById(tx, tenantId);
      if (!tenant) return true;
      for (const admin of await findAdminRecipients(tx, tenantId)) {
        const ctx = this.mailer.contextFor(tenant, admin.email, admin.locale);
        const t = mailTranslator(ctx.locale);
        // the URL is the admins' own, shown as text (mail clients may still link it)
        await this.mailer.send(renderMail(ctx, t('webhookDisabled.subject', { workspace: ctx.brand.workspace }), [
          { kind: 'text', text: t('webhookDisabled.body', { url: disabledEndpoint.url }) },
          { kind: 'text', text: t('webhookDisabled.advice') },
        ]), tenantId, tx);
      }
      return true;
    });
    if (disabled) this.logger.warn({ endpointId, tenantId }, 'webhook endpoint disabled after failing too long');
  }
}
