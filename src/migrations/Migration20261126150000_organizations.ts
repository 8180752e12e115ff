import { Migration } from '@mikro-orm/migrations';

/**
 * Organizations (docs/organizations.md): the tenant's own customers, one person in any number of them.
 * - `organization`: one customer of the tenant.
 * - `organization_role`: the tenant's one template of organization roles, each with the names of the
 *   organization permissions it grants (a JSON array of strings).
 * - `organization_membership`: a user in an organization; removed with the user (erasure) or the organization.
 * - `organization_membership_role`: the roles of one membership; removed with the membership or the role.
 * - `invite` gains `organization_id` and `organization_roles` (role names): accepting such an invite
 *   makes the person a member.
 */
export class Migration20261126150000_organizations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table organization (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      name varchar(200) not null,
      description varchar(1000) null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );`);
    this.addSql('create index organization_tenant_created_idx on organization (tenant_id, created_at, id);');
    this.addSql(`create table organization_role (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      name varchar(64) not null,
      description varchar(1000) null,
      permissions jsonb not null default '[]',
      created_at timestamptz not null,
      updated_at timestamptz not null
    );`);
    this.addSql('create unique index organization_role_tenant_name_unique on organization_role (tenant_id, name);');
    this.addSql(`create table organization_membership (
      organization_id uuid not null references organization (id) on delete cascade,
      user_id uuid not null references app_user (id) on delete cascade,
      tenant_id uuid not null references tenant (id) on delete cascade,
      created_at timestamptz not null,
      primary key (organization_id, user_id)
    );`);
    this.addSql('create index organization_membership_user_idx on organization_membership (tenant_id, user_id);');
    this.addSql(`create table organization_membership_role (
      organization_id uuid not null,
      user_id uuid not null,
      role_id uuid not null references organization_role (id) on delete cascade,
      tenant_id uuid not null references tenant (id) on delete cascade,
      primary key (organization_id, user_id, role_id),
      foreign key (organization_id, user_id) references organization_membership (organization_id, user_id) on delete cascade
    );`);
    this.addSql('create index organization_membership_role_role_idx on organization_membership_role (role_id);');
    this.addSql('alter table invite add column organization_id uuid null references organization (id) on delete cascade;');
    this.addSql(`alter table invite add column organization_roles jsonb not null default '[]';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table invite drop column organization_roles;');
    this.addSql('alter table invite drop column organization_id;');
    this.addSql('drop table organization_membership_role;');
    this.addSql('drop table organization_membership;');
    this.addSql('drop table organization_role;');
    this.addSql('drop table organization;');
  }
}
