import { Migration } from '@mikro-orm/migrations';

/**
 * Recovery codes and the session list (docs/mfa.md "Recovery codes", docs/api-rules.md
 * "Sessions of a user"):
 * - `mfa_recovery_code`: the single-use TOTP recovery codes of a user, each stored only as the
 *   SHA-256 (lower-case hex) of `tenantId:userId:code`; `used_at` set when spent.
 * - `session.method`: how the session was authenticated (`password`, `password+totp`,
 *   `password+recovery_code`, `password+email_otp`, `idp`, `idp+totp`, …). Null for sessions
 *   started before this migration.
 */
export class Migration20261123090000_recovery_codes_sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table mfa_recovery_code (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      code_hash varchar(64) not null,
      created_at timestamptz not null,
      used_at timestamptz null,
      constraint mfa_recovery_code_hash_unique unique (tenant_id, user_id, code_hash)
    );`);
    this.addSql('alter table session add column method varchar(32) null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table session drop column if exists method;');
    this.addSql('drop table if exists mfa_recovery_code;');
  }
}
