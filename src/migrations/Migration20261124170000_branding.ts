import { Migration } from '@mikro-orm/migrations';

/**
 * A workspace's branding (docs/web.md "Branding"): a display name, a button colour and a support
 * link on the tenant, and its logo's bytes in `tenant_logo` (one per tenant; `tenant.logo_etag`
 * names the stored version so pages and mails can link it without reading the bytes).
 */
export class Migration20261124170000_branding extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table tenant add column display_name varchar(120) null;');
    this.addSql(`alter table tenant add column primary_color varchar(7) null check (primary_color ~ '^#[0-9a-f]{6}$');`);
    this.addSql('alter table tenant add column support_url varchar(2048) null;');
    this.addSql('alter table tenant add column logo_etag varchar(64) null;');
    this.addSql(
      `create table tenant_logo (
         tenant_id uuid primary key references tenant (id) on delete cascade,
         content_type varchar(32) not null check (content_type in ('image/png', 'image/jpeg', 'image/webp', 'image/gif')),
         bytes bytea not null,
         etag varchar(64) not null,
         updated_at timestamptz not null
       );`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table tenant_logo;');
    this.addSql('alter table tenant drop column logo_etag;');
    this.addSql('alter table tenant drop column support_url;');
    this.addSql('alter table tenant drop column primary_color;');
    this.addSql('alter table tenant drop column display_name;');
  }
}
