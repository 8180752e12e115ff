import { Migration } from '@mikro-orm/migrations';

/**
 * The browser binding of a provider sign-in started from the hosted pages (docs/web.md "Sign-in with the
 * identity provider"): the SHA-256 (lower-case hex) of the random value kept in the browser's
 * `idp_binding_{slug}` cookie. Null for flows started by API clients, which keep working unbound.
 */
export class Migration20261123070000_idp_browser_binding extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table idp_auth_request add column browser_binding_hash varchar(64) null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table idp_auth_request drop column browser_binding_hash;');
  }
}
