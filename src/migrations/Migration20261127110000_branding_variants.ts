import { Migration } from '@mikro-orm/migrations';

/**
 * Branding follow-up (docs/web.md "Branding"): a second logo for the dark theme (`tenant_logo` keyed
 * by tenant and variant; `tenant.dark_logo_etag` names it as `logo_etag` names the light one) and how
 * the page header shows the workspace (`brand_display`).
 */
export class Migration20261127110000_branding_variants extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table tenant_logo add column variant varchar(8) not null default 'light' check (variant in ('light', 'dark'));`);
    this.addSql('alter table tenant_logo drop constraint tenant_logo_pkey;');
    this.addSql('alter table tenant_logo add primary key (tenant_id, variant);');
    this.addSql('alter table tenant add column dark_logo_etag varchar(64) null;');
    this.addSql(
      `alter table tenant add column brand_display varchar(16) not null default 'LogoAndName'
         check (brand_display in ('LogoAndName', 'LogoOnly', 'NameOnly'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('alter table tenant drop column brand_display;');
    this.addSql('alter table tenant drop column dark_logo_etag;');
    this.addSql(`delete from tenant_logo where variant <> 'light';`);
    this.addSql('alter table tenant_logo drop constraint tenant_logo_pkey;');
    this.addSql('alter table tenant_logo drop column variant;');
    this.addSql('alter table tenant_logo add primary key (tenant_id);');
  }
}
