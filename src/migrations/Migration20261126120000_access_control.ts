import { Migration } from '@mikro-orm/migrations';

/**
 * Roles and permissions for the tenant's own APIs (docs/oidc.md "Roles and permissions"):
 * - `api_resource`: an API of the tenant, named by its `identifier` (the RFC 8707 `resource` and the
 *   `aud` of its access tokens), unique per tenant. `legacy_origin` marks a resource registered by
 *   this migration from a redirect-URI origin: any resource URL of that origin names it, as the
 *   implicit rule before this migration did.
 * - `api_permission`: a permission (OAuth scope) of one resource, unique by name per resource.
 * - `access_role`: a role of the tenant (its own, unrelated to the built-in `app_user.role`), unique
 *   by name per tenant; `access_role_permission` the permissions it bundles.
 * - `user_access_role`, `application_access_role`: which users and (m2m) applications hold a role.
 * - `app_user.custom_data`: the tenant's own JSON object about a user (at most 4 KiB), the
 *   `custom_data` claim.
 * Every row carries its tenant; deleting a resource, permission, role, user or application removes
 * the rows that point at it (cascades).
 *
 * Data: every distinct origin of a redirect URI of an existing application (http/https only) becomes
 * an API resource of its tenant, so resource indicators that worked before keep working.
 */
export class Migration20261126120000_access_control extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table api_resource (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      name varchar(100) not null,
      identifier varchar(512) not null,
      legacy_origin boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (tenant_id, identifier)
    );`);
    this.addSql('create index api_resource_tenant_idx on api_resource (tenant_id, created_at);');
    this.addSql(`create table api_permission (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      resource_id uuid not null references api_resource (id) on delete cascade,
      name varchar(64) not null,
      description varchar(500) not null default '',
      created_at timestamptz not null,
      unique (resource_id, name)
    );`);
    this.addSql(`create table access_role (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      name varchar(100) not null,
      description varchar(500) not null default '',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (tenant_id, name)
    );`);
    this.addSql(`create table access_role_permission (
      tenant_id uuid not null references tenant (id) on delete cascade,
      role_id uuid not null references access_role (id) on delete cascade,
      permission_id uuid not null references api_permission (id) on delete cascade,
      primary key (role_id, permission_id)
    );`);
    this.addSql('create index access_role_permission_permission_idx on access_role_permission (permission_id);');
    this.addSql(`create table user_access_role (
      tenant_id uuid not null references tenant (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      role_id uuid not null references access_role (id) on delete cascade,
      created_at timestamptz not null,
      primary key (user_id, role_id)
    );`);
    this.addSql('create index user_access_role_role_idx on user_access_role (role_id);');
    this.addSql(`create table application_access_role (
      tenant_id uuid not null references tenant (id) on delete cascade,
      application_id uuid not null references oidc_application (id) on delete cascade,
      role_id uuid not null references access_role (id) on delete cascade,
      created_at timestamptz not null,
      primary key (application_id, role_id)
    );`);
    this.addSql('create index application_access_role_role_idx on application_access_role (role_id);');
    this.addSql(`alter table app_user add column custom_data jsonb not null default '{}';`);
    // today's implicit rule, made explicit: each redirect-URI origin of an existing application
    this.addSql(`insert into api_resource (id, tenant_id, name, identifier, legacy_origin, created_at, updated_at)
      select gen_random_uuid(), o.tenant_id, left(o.origin, 100), o.origin, true, now(), now()
        from (select distinct a.tenant_id, lower(substring(u.uri from '^(https?://[^/?#]+)')) as origin
                from oidc_application a, jsonb_array_elements_text(a.redirect_uris) as u(uri)) o
       where o.origin is not null and length(o.origin) <= 512
      on conflict (tenant_id, identifier) do nothing;`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table app_user drop column custom_data;');
    this.addSql('drop table application_access_role;');
    this.addSql('drop table user_access_role;');
    this.addSql('drop table access_role_permission;');
    this.addSql('drop table access_role;');
    this.addSql('drop table api_permission;');
    this.addSql('drop table api_resource;');
  }
}
