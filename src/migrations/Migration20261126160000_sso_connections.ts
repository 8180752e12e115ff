import { Migration } from '@mikro-orm/migrations';

/**
 * Enterprise single sign-on (docs/sso.md): a customer company's SAML 2.0 or OpenID Connect identity
 * provider per connection.
 * - `sso_connection`: one connection of the tenant: for SAML the identity provider's entity id, its
 *   HTTP-Redirect SingleSignOnService URL and signing certificates (PEM, a JSON array), and the
 *   connection's own SP key pair (private key as keyring ciphertext, self-signed certificate) that
 *   signs AuthnRequests (when asked) and decrypts encrypted assertions; for OpenID
 *   Connect its issuer, client id and client secret (keyring ciphertext); the organization its
 *   people join, and whether its provider's sign-in counts as multi-factor.
 * - `sso_connection_domain`: the email domains routed to a connection; a domain belongs to one
 *   connection of the tenant (the primary key).
 * - `sso_auth_request`: one AuthnRequest this service sent (its SAML `ID`, for `InResponseTo`), bound
 *   to the browser that started it (SHA-256 of the binding cookie), for a sign-in or for an Admin's
 *   test of the connection (`purpose`); for OpenID Connect `request_id` is the SHA-256 of the `state`
 *   and `secrets_enc` holds the nonce and PKCE verifier (keyring ciphertext); after the answer was verified the
 *   response, it holds the verified identity (keyring ciphertext) until the browser completes the
 *   sign-in with the single-use completion code (stored as its SHA-256).
 * - `sso_assertion`: the ids of accepted assertions until they expire, so that none is accepted twice.
 */
export class Migration20261126160000_sso_connections extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table sso_connection (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      name varchar(100) not null,
      protocol varchar(8) not null check (protocol in ('saml', 'oidc')),
      organization_id uuid null references organization (id) on delete set null,
      default_organization_roles jsonb not null default '[]',
      provider_performs_mfa boolean not null default false,
      saml_idp_entity_id varchar(1024) null,
      saml_sso_url varchar(2048) null,
      saml_certificates jsonb null,
      saml_metadata_url varchar(2048) null,
      sp_private_key_enc text null,
      sp_certificate text null,
      sign_authn_requests boolean not null default false,
      oidc_issuer varchar(512) null,
      oidc_client_id varchar(255) null,
      oidc_client_secret_enc text null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      check ((protocol = 'saml' and saml_idp_entity_id is not null and saml_sso_url is not null and saml_certificates is not null
              and sp_private_key_enc is not null and sp_certificate is not null)
          or (protocol = 'oidc' and oidc_issuer is not null and oidc_client_id is not null and oidc_client_secret_enc is not null))
    );`);
    this.addSql('create index sso_connection_tenant_idx on sso_connection (tenant_id, created_at, id);');
    this.addSql(`create table sso_connection_domain (
      tenant_id uuid not null references tenant (id) on delete cascade,
      domain varchar(253) not null,
      connection_id uuid not null references sso_connection (id) on delete cascade,
      primary key (tenant_id, domain)
    );`);
    this.addSql('create index sso_connection_domain_connection_idx on sso_connection_domain (connection_id);');
    this.addSql(`create table sso_auth_request (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      connection_id uuid not null references sso_connection (id) on delete cascade,
      request_id varchar(128) not null,
      browser_binding_hash varchar(64) not null,
      purpose varchar(8) not null default 'sign_in' check (purpose in ('sign_in', 'test')),
      return_to varchar(2048) null,
      secrets_enc text null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      consumed_at timestamptz null,
      completion_hash varchar(64) null,
      identity_enc text null,
      completion_expires_at timestamptz null,
      completed_at timestamptz null
    );`);
    this.addSql('create unique index sso_auth_request_request_unique on sso_auth_request (tenant_id, connection_id, request_id);');
    this.addSql('create unique index sso_auth_request_completion_unique on sso_auth_request (completion_hash);');
    this.addSql('create index sso_auth_request_expiry_idx on sso_auth_request (tenant_id, expires_at);');
    this.addSql(`create table sso_assertion (
      connection_id uuid not null references sso_connection (id) on delete cascade,
      assertion_id varchar(256) not null,
      tenant_id uuid not null references tenant (id) on delete cascade,
      expires_at timestamptz not null,
      primary key (connection_id, assertion_id)
    );`);
    this.addSql('create index sso_assertion_expiry_idx on sso_assertion (tenant_id, expires_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists sso_assertion;');
    this.addSql('drop table if exists sso_auth_request;');
    this.addSql('drop table if exists sso_connection_domain;');
    this.addSql('drop table if exists sso_connection;');
  }
}
