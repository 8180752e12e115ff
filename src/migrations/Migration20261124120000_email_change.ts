import { Migration } from '@mikro-orm/migrations';

/**
 * Changing the sign-in email (docs/lifecycle.md "Changing the email address"): a third purpose of
 * mailed account tokens, `email_change`, whose row also holds the address it confirms (`new_email`,
 * lower-cased, set for that purpose only).
 */
export class Migration20261124120000_email_change extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table account_token add column new_email varchar(254) null;');
    this.addSql('alter table account_token drop constraint account_token_purpose_check;');
    this.addSql(
      `alter table account_token add constraint account_token_purpose_check
         check (purpose in ('email_verification', 'password_reset', 'email_change'));`,
    );
    this.addSql(
      `alter table account_token add constraint account_token_new_email_check
         check ((purpose = 'email_change') = (new_email is not null));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from account_token where purpose = 'email_change';`);
    this.addSql('alter table account_token drop constraint account_token_new_email_check;');
    this.addSql('alter table account_token drop constraint account_token_purpose_check;');
    this.addSql(`alter table account_token add constraint account_token_purpose_check check (purpose in ('email_verification', 'password_reset'));`);
    this.addSql('alter table account_token drop column new_email;');
  }
}
