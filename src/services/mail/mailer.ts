import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Tenant } from '../../entities/tenant.js';
import { DEFAULT_LOCALE, type Locale } from '../../lib/locales.js';
import type { Keyring } from '../../security/keyring.js';
import type { ClaimedJob, JobQueue } from '../jobs/job-queue.js';
import { brandingOf } from '../branding/branding.js';
import type { MailBrand, MailContext } from './mail-layout.js';
import type { MailMessage, MailTransport } from './mail-transport.js';
import { quotedTenantName } from './tenant-name.js';

export type { MailMessage };

const mailMessageSchema = z.object({ to: z.string(), subject: z.string(), text: z.string(), html: z.string() });

/** Purpose label of the keyed digest of a queued mail's recipient (Keyring.digest). */
const RECIPIENT_DIGEST_PURPOSE = 'mail-recipient';

/**
 * Every keyed digest (one per key of the ring) a mail queued by tenant `tenantId` to `email` may
 * carry in `job.recipient_digest`; erasure deletes the queued mails matching one of them.
 */
export function mailRecipientDigests(keyring: Keyring, tenantId: string, email: string): string[] {
  return keyring.digests(`${tenantId}:${email.toLowerCase()}`, RECIPIENT_DIGEST_PURPOSE);
}

/** The digest a mail to `email` for tenant `tenantId` is queued with, under the newest key. */
export function mailRecipientDigest(keyring: Keyring, tenantId: string, email: string): string {
  return keyring.digest(`${tenantId}:${email.toLowerCase()}`, RECIPIENT_DIGEST_PURPOSE);
}

/** Associated data of the ciphertext of queued mail `jobId` (Keyring.encrypt). */
export function queuedMailAad(jobId: string): string {
  return `mail:${jobId}`;
}

/** Runs of a mail job before it is kept as failed: with a 30 s base, the 9 retries span 2 to 4 hours (jitter). */
export const MAIL_MAX_ATTEMPTS = 10;

/**
 * Sends mail through the durable job queue (docs/events.md "Mail"): `send` only stores the message,
 * encrypted with the field-encryption keyring (it may hold a code or a token), in the caller's open
 * transaction when there is one; a worker hands it to the SMTP server (MailTransport) with retries and
 * deletes it once sent. So the caller answers without waiting for SMTP, and neither a slow or down
 * SMTP server nor a crash after the answer loses the mail.
 */
export class Mailer {
  constructor(
    private readonly queue: JobQueue,
    private readonly keyring: Keyring,
    private readonly transport: MailTransport,
    private readonly logger: Logger,
    private readonly publicUrl: string,
  ) {}

  /**
   * Who a mail of `tenant` goes to, in which language and brand (mail-layout.ts): the first of
   * `locales` that is set (callers pass the request's language, then the person's, in that order),
   * else the workspace's default language.
   */
  contextFor(tenant: Tenant, to: string, ...locales: (Locale | null | undefined)[]): MailContext {
    const locale = locales.find((l): l is Locale => !!l) ?? tenant.defaultLocale ?? DEFAULT_LOCALE;
    return { to, locale, brand: this.brandOf(tenant) };
  }

  /** The workspace's look in mails (docs/web.md "Branding"): its display name quoted and defanged, absolute logo URL. */
  private brandOf(tenant: Tenant): MailBrand {
    const branding = brandingOf(tenant, this.publicUrl);
    return {
      workspace: quotedTenantName(branding.displayName), logoUrl: branding.logoUrl, display: branding.brandDisplay,
      primaryColor: branding.primaryColor, supportUrl: branding.supportUrl,
    };
  }

  /**
   * Queues one message from `MAIL_FROM`. With `em` (the transaction of the change that causes the
   * mail), or inside `em.transactional`, the mail is queued only if that transaction commits, and the
   * change only commits with its mail queued (docs/events.md "Mail"). The row also carries a keyed
   * digest of `tenantId` and the recipient, so erasing that person's account deletes the mail while
   * it waits (docs/events.md "Erasure").
   * @param tenantId the tenant on whose behalf the mail goes out.
   * @throws only when the database refuses the insert (as any other write of the operation).
   */
  async send(message: MailMessage, tenantId: string, em?: EntityManager): Promise<void> {
    const id = randomUUID();
    // the tenant rides along inside the ciphertext so key rotation can recompute the recipient digest
    const sealed = this.keyring.encrypt(JSON.stringify({ ...message, tenantId }), queuedMailAad(id));
    const recipientDigest = mailRecipientDigest(this.keyring, tenantId, message.to);
    await this.queue.enqueue('mail.send', { sealed }, { id, maxAttempts: MAIL_MAX_ATTEMPTS, recipientDigest }, em);
    this.logger.debug({ jobId: id, to: message.to, subject: message.subject }, 'mail queued');
  }

  /** Job handler of `mail.send`: decrypts and delivers; throws (retry) when SMTP fails. */
  async deliver(job: ClaimedJob): Promise<void> {
    const sealed = z.object({ sealed: z.string() }).parse(job.payload).sealed;
    const message = mailMessageSchema.parse(JSON.parse(this.keyring.decrypt(sealed, queuedMailAad(job.id))));
    await this.transport.deliver(message, job.id);
  }

  /** Closes pooled SMTP connections. */
  async close(): Promise<void> {
    this.transport.close();
  }
}
