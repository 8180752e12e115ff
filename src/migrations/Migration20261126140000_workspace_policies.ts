import { Migration } from '@mikro-orm/migrations';

/**
 * A workspace's policies (docs/api-rules.md "Workspace policies"): the password rules (minimum
 * length, refusing common passwords), the lockout after failed sign-ins, and the refresh-token
 * lifetime of new sessions. The defaults are the values the service used before they were settings.
 */
export class Migration20261126140000_workspace_policies extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table tenant add column password_min_length integer not null default 12 check (password_min_length between 12 and 128);');
    this.addSql('alter table tenant add column password_reject_common boolean not null default true;');
    this.addSql('alter table tenant add column lockout_max_failed_attempts integer not null default 10 check (lockout_max_failed_attempts between 3 and 100);');
    this.addSql('alter table tenant add column lockout_window_seconds integer not null default 900 check (lockout_window_seconds between 60 and 86400);');
    this.addSql(
      'alter table tenant add column refresh_token_lifetime_seconds integer not null default 2592000 check (refresh_token_lifetime_seconds between 3600 and 2592000);',
    );
  }

  override async down(): Promise<void> {
    this.addSql('alter table tenant drop column refresh_token_lifetime_seconds;');
    this.addSql('alter table tenant drop column lockout_window_seconds;');
    this.addSql('alter table tenant drop column lockout_max_failed_attempts;');
    this.addSql('alter table tenant drop column password_reject_common;');
    this.addSql('alter table tenant drop column password_min_length;');
  }
}
