import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotent invite creation (docs/api-rules.md "Users and sign-up", `Idempotency-Key` on POST invites):
 * `invite_answer` keeps the answer of an invite created with the header for 24 hours, so a retry
 * with the same key and the same request gets the same invite and token again instead of a second
 * invite and a second mail.
 * - `key_hash`: SHA-256 (hex) of the tenant, the caller (actor type and id) and the key, so the key
 *   is not stored and one caller's keys never meet another's.
 * - `request_hash`: SHA-256 (hex) of the request as it takes effect (normalised email, role,
 *   lifetime, organization and its roles); the same key with another request is refused.
 * - `answer`: the invite and its token as JSON, encrypted under the keyring (AES-256-GCM,
 *   associated data `invite-answer:<key_hash>`).
 * Rows are deleted by the retention sweep once `expires_at` passed; an invite's or a tenant's
 * deletion takes its rows along.
 */
export class Migration20261128100000_invite_answer extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table invite_answer (
      key_hash varchar(64) not null primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      invite_id uuid not null references invite (id) on delete cascade,
      request_hash varchar(64) not null,
      answer text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null
    );`);
    this.addSql('create index invite_answer_expires_idx on invite_answer (expires_at);');
    this.addSql('create index invite_answer_invite_idx on invite_answer (invite_id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists invite_answer;');
  }
}
