import { Migration } from '@mikro-orm/migrations';

/**
 * Organizations at scale (docs/performance.md "Organizations at scale": 100,000 organizations and
 * 1,000,000 memberships in one tenant).
 * - `organization_membership_org_created_idx` `(organization_id, created_at, user_id) include
 *   (tenant_id)`: an organization's members in list order, and the member counts of GET organizations
 *   as an index-only scan (the primary key lacks `tenant_id`, so its scans read the table).
 * - `app_user_tenant_deleted_idx` `(tenant_id, id)` of soft-deleted users only: the member counts
 *   read one tenant's soft-deleted users from it (index-only) to leave them out, instead of reading
 *   each member's row.
 * - `organization_name_trgm_idx`: trigram index on `lower(name)` for the name search of GET
 *   organizations (only where pg_trgm is available), with a statistics target of 1,000 on the
 *   expression so that the planner knows how many names a search matches (a few: the index and a
 *   sort; many: the list order until the page is full).
 */
export class Migration20261126170000_organizations_at_scale extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index organization_membership_org_created_idx on organization_membership (organization_id, created_at, user_id) include (tenant_id);');
    this.addSql('create index app_user_tenant_deleted_idx on app_user (tenant_id, id) where deleted_at is not null;');
    this.addSql(`do $$
      begin
        begin
          create extension if not exists pg_trgm;
        exception when others then
          raise notice 'pg_trgm is not available: organization search runs without a trigram index';
        end;
        if exists (select 1 from pg_extension where extname = 'pg_trgm') then
          execute 'create index organization_name_trgm_idx on organization using gin (lower(name) gin_trgm_ops)';
          execute 'alter index organization_name_trgm_idx alter column 1 set statistics 1000';
        end if;
      end
    $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists organization_name_trgm_idx;');
    this.addSql('drop index app_user_tenant_deleted_idx;');
    this.addSql('drop index organization_membership_org_created_idx;');
  }
}
