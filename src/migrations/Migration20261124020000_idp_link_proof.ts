import { Migration } from '@mikro-orm/migrations';

/**
 * Provider links need the account's own proof (docs/idp.md "Linking an existing account"):
 * `idp_auth_request.link_user_id` names the signed-in user who started a link flow
 * (`me/idp/link`); such a flow can only link to that user. `tenant.idp_mfa_trust` (default false):
 * whether a provider's `amr` may stand in for a user's own enrolled factor.
 */
export class Migration20261124020000_idp_link_proof extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table idp_auth_request add column link_user_id uuid null references app_user(id) on delete cascade;');
    this.addSql('alter table tenant add column idp_mfa_trust boolean not null default false;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table tenant drop column idp_mfa_trust;');
    this.addSql('alter table idp_auth_request drop column link_user_id;');
  }
}
