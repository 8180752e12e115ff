import { Migration } from '@mikro-orm/migrations';

/**
 * Invites, and the audit-log indexes for the `userId` and `search` filters of GET audit
 * (see docs/audit.md for the query plans at a million events per tenant).
 *
 * The trigram index needs the `pg_trgm` extension. PostgreSQL ships it in contrib; the embedded
 * PGlite only has it when loaded at start. When the extension cannot be created the migration
 * still succeeds without that index and `search` runs as a filter over the tenant's time index.
 */
export class Migration20261123020000_invites_audit_search extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table invite (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      email varchar(254) not null,
      role varchar(16) not null,
      status varchar(16) not null,
      token_hash varchar(64) not null,
      invited_by_type varchar(16) not null,
      invited_by uuid null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      accepted_at timestamptz null,
      accepted_user_id uuid null,
      revoked_at timestamptz null,
      constraint invite_token_hash_unique unique (token_hash)
    );`);
    this.addSql(`create index invite_tenant_created_idx on invite (tenant_id, created_at desc);`);
    this.addSql(`create index invite_tenant_open_email_idx on invite (tenant_id, email) where status = 'Open';`);

    // GET audit?userId=… matches the actor or the target: one ordered index per side.
    this.addSql(`create index audit_event_tenant_actor_time_idx on audit_event (tenant_id, actor_id, created_at desc, id desc);`);
    this.addSql(`create index audit_event_tenant_target_time_idx on audit_event (tenant_id, target_id, created_at desc, id desc);`);

    // GET audit?search=…: a trigram GIN index over the searched text, when pg_trgm is available.
    this.addSql(`do $$
      begin
        begin
          create extension if not exists pg_trgm;
        exception when others then
          raise notice 'pg_trgm is not available: audit search runs without a trigram index';
        end;
        if exists (select 1 from pg_extension where extname = 'pg_trgm') then
          execute 'create index audit_event_search_trgm_idx on audit_event using gin ((action || '' '' || details::text) gin_trgm_ops)';
        end if;
      end
    $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists audit_event_search_trgm_idx;');
    this.addSql('drop index if exists audit_event_tenant_target_time_idx;');
    this.addSql('drop index if exists audit_event_tenant_actor_time_idx;');
    this.addSql('drop table if exists invite;');
  }
}
