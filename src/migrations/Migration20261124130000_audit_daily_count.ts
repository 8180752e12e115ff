import { Migration } from '@mikro-orm/migrations';

/**
 * Daily counts of the actions the console's activity charts draw (docs/audit.md "Activity"): one
 * row per tenant, closed UTC day and counted action, filled the first time a chart needs the day,
 * so a chart reads at most 30 small rows per series plus the events of the open days.
 */
export class Migration20261124130000_audit_daily_count extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table audit_daily_count (
      tenant_id uuid not null references tenant (id) on delete cascade,
      day date not null,
      action varchar(40) not null,
      count int not null,
      primary key (tenant_id, day, action)
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists audit_daily_count;');
  }
}
