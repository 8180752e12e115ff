import { Migration } from '@mikro-orm/migrations';

/**
 * Languages (docs/web.md "Languages"): a workspace's default language for its pages and mails
 * (`tenant.default_locale`), and the language a person last used (`app_user.locale`, set at sign-up
 * and at each sign-in from the page's language), which mails to that person speak.
 */
export class Migration20261124160000_languages extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table tenant add column default_locale varchar(8) not null default 'en' check (default_locale in ('en', 'de', 'fr'));`);
    this.addSql(`alter table app_user add column locale varchar(8) null check (locale in ('en', 'de', 'fr'));`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table app_user drop column locale;');
    this.addSql('alter table tenant drop column default_locale;');
  }
}
