import { Migration } from '@mikro-orm/migrations';

/**
 * Account-takeover defences (docs/security.md):
 * - `session.authenticated_at`: when the session was last authenticated by a password, the
 *   provider or a second factor; refreshing does not renew it. Factor enrolment needs it to be
 *   recent. Sessions started before this migration count as not recent.
 * - `mfa_challenge`: the short-lived, single-use token of a provider sign-in still waiting for its
 *   second factor (`auth/mfa/complete`), stored only as a SHA-256 hash.
 */
export class Migration20261123050000_account_takeover extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table session add column authenticated_at timestamptz null;');
    this.addSql(`create table mfa_challenge (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      token_hash varchar(64) not null,
      first_factor varchar(16) not null,
      issuer varchar(2048) null,
      attempts integer not null default 0,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      consumed_at timestamptz null,
      constraint mfa_challenge_token_hash_unique unique (token_hash)
    );`);
    this.addSql('create index mfa_challenge_user_idx on mfa_challenge (tenant_id, user_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists mfa_challenge;');
    this.addSql('alter table session drop column if exists authenticated_at;');
  }
}
