import { Migration } from '@mikro-orm/migrations';

/**
 * A refresh writes no session row (docs/performance.md "The refresh path"): `session.last_refreshed_at`
 * goes, and a session's last refresh is read as the creation of its newest successor refresh token
 * (every refresh inserted one, so nothing is lost). One row update less on every refresh.
 */
export class Migration20261127030000_refresh_writes_no_session extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table session drop column last_refreshed_at;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table session add column last_refreshed_at timestamptz null;');
    this.addSql(`update session s set last_refreshed_at = (
      select max(rt.created_at) from refresh_token rt where rt.session_id = s.id and rt.parent_id is not null);`);
  }
}
