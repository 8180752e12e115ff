import { Migration } from '@mikro-orm/migrations';

/** Email one-time codes of the second factor (docs/mfa.md): one open code per user, stored hashed. */
export class Migration20261123010000_email_otp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table email_otp (
      user_id uuid primary key references app_user (id) on delete cascade,
      tenant_id uuid not null references tenant (id) on delete cascade,
      code_hash varchar(64) not null,
      attempts integer not null default 0,
      created_at timestamptz not null,
      expires_at timestamptz not null
    );`);
    this.addSql(`create index email_otp_tenant_idx on email_otp (tenant_id);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists email_otp;');
  }
}
