import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotent refresh (docs/api-rules.md "Credentials and sessions", `Idempotency-Key` on auth/refresh):
 * `refresh_answer` keeps the answer of a successful refresh that carried the header for 60 s, so a
 * retry with the same key and the same token gets the same pair again instead of counting as a replay.
 * - `key_hash`: SHA-256 (hex) of the presented token's hash and the key, so neither is stored.
 * - `answer`: the issued pair and the user id as JSON, encrypted under the keyring (AES-256-GCM,
 *   associated data `refresh-answer:<key_hash>`).
 * - `successor_id`: the refresh token the answer issued; the answer is only given while it is unused.
 * Rows are deleted by the sweep once `expires_at` passed; a session's deletion takes its rows along.
 */
export class Migration20261124050000_refresh_answer extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table refresh_answer (
      key_hash varchar(64) not null primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      session_id uuid not null references session (id) on delete cascade,
      successor_id uuid not null,
      answer text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null
    );`);
    this.addSql('create index refresh_answer_expires_idx on refresh_answer (expires_at);');
    this.addSql('create index refresh_answer_session_idx on refresh_answer (session_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists refresh_answer;');
  }
}
