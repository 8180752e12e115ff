import { Migration } from '@mikro-orm/migrations';

/**
 * Each tenant as an OpenID Provider of its own applications (docs/oidc.md):
 * - `oidc_application`: a registered client (relying party) of one tenant; the client secret of a
 *   confidential client is encrypted under the keyring, never stored in clear.
 * - `oidc_signing_key`: the tenant's ES256 signing keys; the private JWK encrypted under the
 *   keyring. The newest live key signs; retired ones stay in the JWKS until their tokens expired.
 * - `oidc_payload`: oidc-provider's storage (authorization codes, access and refresh tokens,
 *   grants, sessions, interactions), per tenant and model, swept when expired.
 * - `oidc_hosted_login`: which hosted-page session completed a sign-in of which user, so that
 *   RP-initiated logout ends it too.
 */
export class Migration20261124100000_oidc_provider extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table oidc_application (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      name varchar(100) not null,
      type varchar(10) not null check (type in ('web', 'spa', 'native', 'm2m')),
      client_id varchar(64) not null unique,
      client_secret_enc text null,
      redirect_uris jsonb not null default '[]',
      post_logout_redirect_uris jsonb not null default '[]',
      created_at timestamptz not null,
      updated_at timestamptz not null
    );`);
    this.addSql('create index oidc_application_tenant_idx on oidc_application (tenant_id, created_at);');
    this.addSql(`create table oidc_signing_key (
      kid varchar(64) primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      alg varchar(10) not null,
      private_jwk_enc text not null,
      created_at timestamptz not null,
      retired_at timestamptz null
    );`);
    this.addSql('create index oidc_signing_key_tenant_idx on oidc_signing_key (tenant_id, created_at);');
    this.addSql(`create table oidc_payload (
      tenant_id uuid not null references tenant (id) on delete cascade,
      model varchar(40) not null,
      id varchar(255) not null,
      payload jsonb not null,
      grant_id varchar(255) null,
      uid varchar(255) null,
      user_code varchar(255) null,
      account_id varchar(255) null,
      client_id varchar(255) null,
      expires_at timestamptz null,
      consumed_at timestamptz null,
      primary key (tenant_id, model, id)
    );`);
    this.addSql('create index oidc_payload_grant_idx on oidc_payload (tenant_id, grant_id) where grant_id is not null;');
    this.addSql('create index oidc_payload_uid_idx on oidc_payload (tenant_id, model, uid) where uid is not null;');
    this.addSql('create index oidc_payload_client_idx on oidc_payload (tenant_id, client_id) where client_id is not null;');
    this.addSql('create index oidc_payload_account_idx on oidc_payload (tenant_id, account_id) where account_id is not null;');
    this.addSql('create index oidc_payload_expiry_idx on oidc_payload (expires_at) where expires_at is not null;');
    this.addSql(`create table oidc_hosted_login (
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      session_id uuid not null references session (id) on delete cascade,
      created_at timestamptz not null,
      primary key (tenant_id, user_id, session_id)
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table oidc_hosted_login;');
    this.addSql('drop table oidc_payload;');
    this.addSql('drop table oidc_signing_key;');
    this.addSql('drop table oidc_application;');
  }
}
