import { Migration } from '@mikro-orm/migrations';

/**
 * Moving users in from another system (docs/import.md): `app_user.imported_at` marks a user created
 * by an import (when). An imported password hash is kept in `password_hash` as its JSON record
 * (security/foreign-passwords.ts) until the user's next sign-in replaces it with argon2id.
 */
export class Migration20261126130000_user_import extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table app_user add column imported_at timestamptz null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table app_user drop column imported_at;');
  }
}
