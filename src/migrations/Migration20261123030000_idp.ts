import { Migration } from '@mikro-orm/migrations';

/** External identity-provider sign-in: pending authorization requests and user ↔ provider-subject links. */
export class Migration20261123030000_idp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table idp_auth_request (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      state_hash varchar(64) not null,
      secrets_enc text not null,
      issuer varchar(512) not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      consumed_at timestamptz null,
      constraint idp_auth_request_state_unique unique (state_hash)
    );`);
    this.addSql(`create index idp_auth_request_tenant_expiry_idx on idp_auth_request (tenant_id, expires_at);`);

    this.addSql(`create table idp_identity (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      issuer varchar(512) not null,
      subject varchar(255) not null,
      email varchar(254) null,
      created_at timestamptz not null,
      last_login_at timestamptz null,
      constraint idp_identity_subject_unique unique (tenant_id, issuer, subject)
    );`);
    this.addSql(`create index idp_identity_user_idx on idp_identity (user_id);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists idp_identity;');
    this.addSql('drop table if exists idp_auth_request;');
  }
}
