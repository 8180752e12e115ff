import { Migration } from '@mikro-orm/migrations';

/**
 * Job-queue retention and erasure (docs/events.md "Retention", "Erasure"):
 * - `job.recipient_digest`: keyed digest (HMAC-SHA256 under a key derived from the keyring,
 *   `<key version>:<hex>`) of the lower-cased recipient of a queued mail, so erasing a user can find
 *   and delete the mails queued to their address without decrypting every payload; null for other jobs.
 * - indexes for the retention sweep: failed jobs by `failed_at`, delivery-log rows by `created_at`.
 */
export class Migration20261123110000_job_queue_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table job add column recipient_digest varchar(96) null;');
    this.addSql('create index job_recipient_digest_idx on job (recipient_digest) where recipient_digest is not null;');
    this.addSql('create index job_failed_idx on job (queue, failed_at) where failed_at is not null;');
    this.addSql('create index webhook_delivery_created_idx on webhook_delivery (created_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists webhook_delivery_created_idx;');
    this.addSql('drop index if exists job_failed_idx;');
    this.addSql('drop index if exists job_recipient_digest_idx;');
    this.addSql('alter table job drop column recipient_digest;');
  }
}
