import { Migration } from '@mikro-orm/migrations';

/**
 * A person's profile (docs/api-rules.md "Users and sign-up"): `app_user.name`, an optional display
 * name of at most 128 characters, and `app_user.picture`, an optional https URL of at most 2048
 * characters; the OpenID `profile` scope's `name` and `picture` claims (docs/oidc.md).
 */
export class Migration20261127100000_user_profile extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table app_user add column name varchar(128) null, add column picture varchar(2048) null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table app_user drop column picture, drop column name;');
  }
}
