import type { EntityManager } from '@mikro-orm/postgresql';
import type { Keyring } from '../../security/keyring.js';
import { mailRecipientDigests } from './mailer.js';
import { findTenantPeopleEmails } from '../../queries/user.js';
import { deleteJobsOfRecipient, deleteJobsOfTenant } from '../../queries/job.js';

/**
 * Erasure of the personal data waiting in the job queue (GDPR art. 17; docs/events.md "Erasure").
 * Two kinds of job carry a person's email or IP address:
 * - `mail.send`: the encrypted message;
 * - `account-mail.request`: the encrypted email, client IP and user agent of an existence-blind
 *   request (auth/request-email-otp, password-reset/request, request-email-verification).
 * Both are found by their keyed recipient digest (tenant + address), without decrypting anything.
 * `webhook.deliver` jobs hold ids only: the body is read from the audit log when the attempt runs, so
 * it carries what the log holds then (scrubbed once the user is erased).
 */
export class QueuedPersonalData {
  constructor(private readonly keyring: Keyring) {}

  /**
   * Deletes, from every queue of the database, the jobs above that concern `email` in tenant
   * `tenantId`, waiting or failed for good. Run it on the transaction that deletes or erases the
   * account, so the deletion and the discard commit together. A mail a worker is handing to SMTP at
   * that moment may still go out.
   * @returns how many jobs were deleted.
   */
  async discard(em: EntityManager, tenantId: string, email: string): Promise<number> {
    const digests = mailRecipientDigests(this.keyring, tenantId, email);
    return deleteJobsOfRecipient(em, digests, tenantId, email);
  }

  /**
   * Deletes every job of tenant `tenantId` from every queue: those whose payload names the tenant
   * (account-mail requests, webhook deliveries) and the mails queued to any of its users or invitees.
   * For the erasure of the tenant, on its transaction.
   * @returns how many jobs were deleted.
   */
  async discardTenant(em: EntityManager, tenantId: string): Promise<number> {
    const people = await findTenantPeopleEmails(em, tenantId);
    let deleted = 0;
    for (const email of people) deleted += await this.discard(em, tenantId, email);
    return deleted + (await deleteJobsOfTenant(em, tenantId));
  }
}
