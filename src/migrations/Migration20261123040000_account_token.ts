import { Migration } from '@mikro-orm/migrations';

/**
 * Single-use account tokens mailed to users (email verification, password reset), stored only as
 * SHA-256 hashes, plus the indexes the erasure sweep uses to find soft-deleted users and tenants.
 */
export class Migration20261123040000_account_token extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table account_token (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      purpose varchar(32) not null,
      token_hash varchar(64) not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      consumed_at timestamptz null,
      constraint account_token_hash_unique unique (token_hash),
      constraint account_token_purpose_check check (purpose in ('email_verification', 'password_reset'))
    );`);
    this.addSql(`create index account_token_user_open_idx on account_token (user_id, purpose) where consumed_at is null;`);
    this.addSql(`create index app_user_deleted_idx on app_user (deleted_at) where deleted_at is not null;`);
    this.addSql(`create index tenant_deleted_idx on tenant (deleted_at) where deleted_at is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists tenant_deleted_idx;');
    this.addSql('drop index if exists app_user_deleted_idx;');
    this.addSql('drop table if exists account_token;');
  }
}
