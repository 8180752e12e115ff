import { Migration } from '@mikro-orm/migrations';

/**
 * Each tenant its own OpenID provider (docs/idp.md "A provider per tenant"): `idp_issuer` (null: the
 * deployment's `IDP_ISSUER`) and `idp_allowed_email_domains` (a JSON array of lower-case domain names;
 * null: any domain). Provider links (`idp_identity`) are already unique per (tenant, issuer, subject)
 * and their rows carry the issuer they were made with, so two providers' equal `sub` values never
 * collide and nothing needs backfilling.
 */
export class Migration20261123100000_tenant_idp_issuer extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table tenant add column idp_issuer varchar(512) null;');
    this.addSql('alter table tenant add column idp_allowed_email_domains jsonb null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table tenant drop column idp_allowed_email_domains;');
    this.addSql('alter table tenant drop column idp_issuer;');
  }
}
