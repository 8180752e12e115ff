import { Migration } from '@mikro-orm/migrations';

/**
 * Spanish (docs/web.md "Languages", issue 38): widens the `check` of a workspace's default language
 * (`tenant.default_locale`) and of a person's language (`app_user.locale`) to take `es`.
 */
export class Migration20261127120000_spanish extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table tenant drop constraint if exists tenant_default_locale_check;');
    this.addSql(`alter table tenant add constraint tenant_default_locale_check check (default_locale in ('en', 'de', 'fr', 'es'));`);
    this.addSql('alter table app_user drop constraint if exists app_user_locale_check;');
    this.addSql(`alter table app_user add constraint app_user_locale_check check (locale in ('en', 'de', 'fr', 'es'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`update tenant set default_locale = 'en' where default_locale = 'es';`);
    this.addSql(`update app_user set locale = null where locale = 'es';`);
    this.addSql('alter table tenant drop constraint if exists tenant_default_locale_check;');
    this.addSql(`alter table tenant add constraint tenant_default_locale_check check (default_locale in ('en', 'de', 'fr'));`);
    this.addSql('alter table app_user drop constraint if exists app_user_locale_check;');
    this.addSql(`alter table app_user add constraint app_user_locale_check check (locale in ('en', 'de', 'fr'));`);
  }
}
