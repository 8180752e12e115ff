import { Migration } from '@mikro-orm/migrations';

/** Tenants, users, session families with their refresh tokens, API keys and the audit log. */
export class Migration20261123000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table tenant (
      id uuid primary key,
      slug varchar(63) not null,
      name varchar(120) not null,
      plan varchar(16) not null default 'Free',
      mfa_policy varchar(16) not null default 'Optional',
      require_email_verification boolean not null default false,
      idp_client_id varchar(512) null,
      idp_client_secret_enc text null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz null,
      constraint tenant_slug_unique unique (slug)
    );`);

    this.addSql(`create table app_user (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      email varchar(254) not null,
      password_hash text null,
      status varchar(16) not null,
      role varchar(16) not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      last_login_at timestamptz null,
      email_verified_at timestamptz null,
      deleted_at timestamptz null,
      totp_secret_enc text null,
      totp_enrolled_at timestamptz null,
      totp_pending_secret_enc text null,
      totp_last_used_step bigint null
    );`);
    this.addSql(
      `create unique index app_user_tenant_email_live_unique on app_user (tenant_id, email) where deleted_at is null;`,
    );
    this.addSql(`create index app_user_tenant_created_idx on app_user (tenant_id, created_at);`);

    this.addSql(`create table session (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      created_at timestamptz not null,
      last_refreshed_at timestamptz null,
      revoked_at timestamptz null,
      revoked_reason varchar(32) null,
      ip varchar(64) null,
      user_agent varchar(512) null
    );`);
    this.addSql(`create index session_user_live_idx on session (user_id) where revoked_at is null;`);

    this.addSql(`create table refresh_token (
      id uuid primary key,
      session_id uuid not null references session (id) on delete cascade,
      tenant_id uuid not null references tenant (id) on delete cascade,
      token_hash varchar(64) not null,
      parent_id uuid null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      rotated_at timestamptz null,
      constraint refresh_token_hash_unique unique (token_hash)
    );`);
    this.addSql(`create index refresh_token_session_idx on refresh_token (session_id);`);

    this.addSql(`create table api_key (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      name varchar(120) not null,
      environment varchar(8) not null,
      prefix varchar(32) not null,
      key_hash varchar(64) not null,
      created_at timestamptz not null,
      created_by uuid null,
      expires_at timestamptz null,
      last_used_at timestamptz null,
      revoked_at timestamptz null,
      constraint api_key_hash_unique unique (key_hash)
    );`);
    this.addSql(`create index api_key_tenant_idx on api_key (tenant_id, created_at);`);

    this.addSql(`create table audit_event (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      action varchar(40) not null,
      actor_type varchar(16) not null,
      actor_id uuid null,
      target_type varchar(32) null,
      target_id varchar(64) null,
      ip varchar(64) null,
      user_agent varchar(512) null,
      details jsonb not null default '{}',
      created_at timestamptz not null
    );`);
    this.addSql(`create index audit_event_tenant_time_idx on audit_event (tenant_id, created_at desc, id desc);`);
    this.addSql(
      `create index audit_event_tenant_action_time_idx on audit_event (tenant_id, action, created_at desc, id desc);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists audit_event;');
    this.addSql('drop table if exists api_key;');
    this.addSql('drop table if exists refresh_token;');
    this.addSql('drop table if exists session;');
    this.addSql('drop table if exists app_user;');
    this.addSql('drop table if exists tenant;');
  }
}
