import { Migration } from '@mikro-orm/migrations';

/**
 * Passkeys (WebAuthn Level 3, docs/passkeys.md):
 * - `passkey`: one registered credential of a user, unique per tenant by its credential id
 *   (base64url). The COSE public key is public by nature; the signature counter and the
 *   backup-eligible / backed-up flags are kept as the authenticator reported them.
 * - `webauthn_challenge`: the single-use, 5-minute challenge of one registration or sign-in
 *   ceremony, bound to its tenant (and user when known), stored only as a SHA-256 hash.
 */
export class Migration20261123080000_passkeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table passkey (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      credential_id varchar(1400) not null,
      public_key bytea not null,
      counter bigint not null default 0,
      transports jsonb not null default '[]',
      backup_eligible boolean not null,
      backed_up boolean not null,
      aaguid varchar(36) not null,
      name varchar(100) not null,
      created_at timestamptz not null,
      last_used_at timestamptz null,
      constraint passkey_tenant_credential_unique unique (tenant_id, credential_id)
    );`);
    this.addSql('create index passkey_user_idx on passkey (tenant_id, user_id);');
    this.addSql(`create table webauthn_challenge (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid null references app_user (id) on delete cascade,
      purpose varchar(16) not null,
      user_bound boolean not null,
      challenge_hash varchar(64) not null,
      created_at timestamptz not null,
      expires_at timestamptz not null
    );`);
    this.addSql('create index webauthn_challenge_user_idx on webauthn_challenge (tenant_id, user_id, purpose);');
    this.addSql('create index webauthn_challenge_expiry_idx on webauthn_challenge (tenant_id, expires_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists webauthn_challenge;');
    this.addSql('drop table if exists passkey;');
  }
}
