import { Migration } from '@mikro-orm/migrations';

/**
 * User administration and sign-up control (docs/api-rules.md "Users and sign-up"):
 * - `tenant.signup_policy` (`Open`, `Domains`, `InviteOnly`) and `tenant.signup_email_domains`;
 * - a trigram index over `app_user.email` for `GET users?search=` (a substring of the address),
 *   when pg_trgm is available (it is on PostgreSQL and in the embedded store).
 */
export class Migration20261124110000_user_administration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table tenant add column signup_policy varchar(16) not null default 'Open';`);
    this.addSql(`alter table tenant add column signup_email_domains jsonb not null default '[]';`);
    this.addSql(`do $$
      begin
        begin
          create extension if not exists pg_trgm;
        exception when others then
          raise notice 'pg_trgm is not available: user search runs without a trigram index';
        end;
        if exists (select 1 from pg_extension where extname = 'pg_trgm') then
          execute 'create index app_user_email_trgm_idx on app_user using gin (email gin_trgm_ops)';
        end if;
      end
    $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists app_user_email_trgm_idx;');
    this.addSql('alter table tenant drop column signup_email_domains;');
    this.addSql('alter table tenant drop column signup_policy;');
  }
}
