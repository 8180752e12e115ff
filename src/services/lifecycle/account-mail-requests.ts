import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { LOCALES } from '../../lib/locales.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import type { TenantScope } from '../../lib/request-scope.js';
import type { ClaimedJob, JobQueue } from '../jobs/job-queue.js';
import type { EmailVerificationService } from './email-verification-service.js';
import type { PasswordResetService } from './password-reset-service.js';
import type { MfaSignInService } from '../sign-in/mfa-sign-in-service.js';
import type { Keyring } from '../../security/keyring.js';
import { mailRecipientDigest } from '../mail/mailer.js';
import { findLiveTenantById } from '../../queries/tenant.js';

/** Account mails a client may ask for with an email address alone. */
export type AccountMailPurpose = 'email_otp' | 'password_reset' | 'email_verification';

/** Runs of one request job: the look-up itself rarely fails; the mail it queues has its own retries. */
const MAX_ATTEMPTS = 5;

const requestSchema = z.object({
  purpose: z.enum(['email_otp', 'password_reset', 'email_verification']),
  tenantId: z.string(),
  email: z.string(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  /** The request's language (absent in rows queued before languages, and when none was asked for). */
  locale: z.enum(LOCALES).optional(),
});

/** The job payload: the tenant in clear (tenant erasure finds its jobs), the request sealed. */
const sealedPayloadSchema = z.object({ tenantId: z.string(), sealed: z.string() });

/** Associated data of the sealed request of job `jobId` (Keyring.encrypt). */
export function accountMailRequestAad(jobId: string): string {
  return `account-mail:${jobId}`;
}

/**
 * The requests that answer `ok` whether or not the account exists (`auth/request-email-otp` without
 * a password, `auth/password-reset/request`, `auth/request-email-verification`; docs/events.md
 * "Mail"). The request only queues a job
 * carrying the tenant, the email and the request metadata (encrypted with the keyring, with the
 * keyed recipient digest erasure looks for), the same single INSERT for every email, so
 * the answer's duration says nothing about the account (OWASP Forgot Password Cheat Sheet: "consistent
 * response time"). The worker then does what the request used to do: look the account up, issue the
 * code or token, audit, and queue the mail.
 */
export class AccountMailRequests {
  constructor(
    private readonly orm: MikroORM,
    private readonly queue: JobQueue,
    private readonly mfaSignIn: MfaSignInService,
    private readonly passwordReset: PasswordResetService,
    private readonly emailVerification: EmailVerificationService,
    private readonly keyring: Keyring,
  ) {}

  /**
   * Queues the request of the scope's workspace with the scope's metadata (in the caller's
   * transaction when `scope.em` is in one).
   */
  async enqueue(scope: TenantScope, purpose: AccountMailPurpose, email: string): Promise<void> {
    const { em, tenant, meta } = scope;
    const id = randomUUID();
    const request = { purpose, tenantId: tenant.id, email, ip: meta.ip, userAgent: meta.userAgent, locale: meta.locale };
    const sealed = this.keyring.encrypt(JSON.stringify(request), accountMailRequestAad(id));
    const recipientDigest = mailRecipientDigest(this.keyring, tenant.id, email);
    await this.queue.enqueue('account-mail.request', { tenantId: tenant.id, sealed }, { id, maxAttempts: MAX_ATTEMPTS, recipientDigest }, em);
  }

  /**
   * Job handler of `account-mail.request`, in one transaction with the job's completion
   * (JobQueue.completeWithin); a deleted tenant ends the job without mail.
   */
  async run(job: ClaimedJob): Promise<void> {
    const sealedPayload = sealedPayloadSchema.safeParse(job.payload);
    // rows queued before the request was sealed carry it in clear
    const payload = sealedPayload.success
      ? requestSchema.parse(JSON.parse(this.keyring.decrypt(sealedPayload.data.sealed, accountMailRequestAad(job.id))))
      : requestSchema.parse(job.payload);
    // the request's work (code or token, audit, the mail's job) and this job's completion commit
    // together: a process killed after the commit does not run the request, and mail, twice
    await (this.orm.em.fork() as EntityManager).transactional(async (tx) => {
      const tenant = await findLiveTenantById(tx, payload.tenantId);
      if (tenant) {
        const meta: RequestMeta = { ip: payload.ip, userAgent: payload.userAgent, ...(payload.locale ? { locale: payload.locale } : {}) };
        if (payload.purpose === 'email_otp') await this.mfaSignIn.requestEmailOtp({ em: tx, tenant, meta }, payload.email, undefined);
        else if (payload.purpose === 'password_reset') await this.passwordReset.request(tx, tenant, payload.email, meta.locale);
        else await this.emailVerification.request(tx, tenant, payload.email, meta.locale);
      }
      await this.queue.completeWithin(tx, job);
    });
  }
}
