import { Migration } from '@mikro-orm/migrations';

/**
 * Sessions end everywhere (docs/oidc.md "Sessions end everywhere"):
 * - `oidc_hosted_login` names the application (client id) each hosted session signed in to and when it
 *   last did, so the session list shows application sign-ins; one row per (session, application).
 * - `tenant_slug_reservation`: every slug ever given to a tenant, kept when the tenant is erased, so a
 *   slug (and so an issuer URL, which resource servers trust) is never given to another tenant.
 */
export class Migration20261126100000_sessions_end_everywhere extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table oidc_hosted_login add column client_id varchar(255) not null default '';`);
    this.addSql('alter table oidc_hosted_login add column last_signed_in_at timestamptz null;');
    this.addSql('update oidc_hosted_login set last_signed_in_at = created_at;');
    this.addSql('alter table oidc_hosted_login alter column last_signed_in_at set not null;');
    this.addSql('alter table oidc_hosted_login drop constraint oidc_hosted_login_pkey;');
    this.addSql('alter table oidc_hosted_login add primary key (tenant_id, user_id, session_id, client_id);');
    this.addSql('create index oidc_hosted_login_session_idx on oidc_hosted_login (tenant_id, session_id);');
    this.addSql(`create table tenant_slug_reservation (
      slug varchar(63) primary key,
      reserved_at timestamptz not null
    );`);
    this.addSql('insert into tenant_slug_reservation (slug, reserved_at) select slug, created_at from tenant;');
  }

  override async down(): Promise<void> {
    this.addSql('drop table tenant_slug_reservation;');
    this.addSql('drop index oidc_hosted_login_session_idx;');
    this.addSql('alter table oidc_hosted_login drop constraint oidc_hosted_login_pkey;');
    this.addSql(`delete from oidc_hosted_login where client_id <> '' and ctid not in (
      select min(ctid) from oidc_hosted_login group by tenant_id, user_id, session_id);`);
    this.addSql('alter table oidc_hosted_login add primary key (tenant_id, user_id, session_id);');
    this.addSql('alter table oidc_hosted_login drop column last_signed_in_at;');
    this.addSql('alter table oidc_hosted_login drop column client_id;');
  }
}
