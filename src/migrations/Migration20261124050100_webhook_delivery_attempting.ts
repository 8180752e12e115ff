import { Migration } from '@mikro-orm/migrations';

/**
 * The webhook delivery log is written before the POST (`outcome` `attempting`) and finished after it
 * (docs/events.md "Webhooks"), so a crash between the two leaves a trace instead of nothing.
 */
export class Migration20261124050100_webhook_delivery_attempting extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_delivery drop constraint webhook_delivery_outcome_check;');
    this.addSql(`alter table webhook_delivery add constraint webhook_delivery_outcome_check check (outcome in ('succeeded', 'failed', 'attempting'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`update webhook_delivery set outcome = 'failed', error = coalesce(error, 'result not recorded') where outcome = 'attempting';`);
    this.addSql('alter table webhook_delivery drop constraint webhook_delivery_outcome_check;');
    this.addSql(`alter table webhook_delivery add constraint webhook_delivery_outcome_check check (outcome in ('succeeded', 'failed'));`);
  }
}
