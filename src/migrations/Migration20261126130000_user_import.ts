import { Migration } from '@mikro-orm/migrations';

/**
 * Moving users in from another system (docs/import.md): `app_user.imported_at` marks a user created
 * by an import (when). An imported password hash is kept in `password_hash` as its JSON record
 * (security/foreign-passwords.ts) until the user's next sign-in replaces it with argon2id.
 *
 * Import jobs (POST users/import-jobs): `user_import_job` holds a job's status and counters,
 * `user_import_line` the NDJSON lines received and not yet processed (each deleted in the transaction
 * that imports it, so a job resumes where it stopped), `user_import_error` the failure report.
 */
export class Migration20261126130000_user_import extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table app_user add column imported_at timestamptz null;');
    this.addSql(
      `create table user_import_job (
         id uuid primary key,
         tenant_id uuid not null references tenant (id) on delete cascade,
         status varchar(16) not null check (status in ('Receiving', 'Queued', 'Running', 'Completed', 'Failed')),
         total integer not null default 0,
         processed integer not null default 0,
         created integer not null default 0,
         skipped integer not null default 0,
         failed integer not null default 0,
         actor_type varchar(16) not null,
         actor_id uuid null,
         created_at timestamptz not null,
         updated_at timestamptz not null,
         finished_at timestamptz null
       );`,
    );
    this.addSql('create index user_import_job_tenant_created_idx on user_import_job (tenant_id, created_at);');
    this.addSql(
      `create table user_import_line (
         job_id uuid not null references user_import_job (id) on delete cascade,
         line_no integer not null,
         payload text not null,
         primary key (job_id, line_no)
       );`,
    );
    this.addSql(
      `create table user_import_error (
         job_id uuid not null references user_import_job (id) on delete cascade,
         line_no integer not null,
         reason varchar(32) not null,
         primary key (job_id, line_no)
       );`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table user_import_error;');
    this.addSql('drop table user_import_line;');
    this.addSql('drop table user_import_job;');
    this.addSql('alter table app_user drop column imported_at;');
  }
}
