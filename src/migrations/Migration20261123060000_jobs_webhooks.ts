import { Migration } from '@mikro-orm/migrations';

/**
 * The durable job queue (mail and webhook deliveries, see docs/events.md) and the webhook tables:
 * endpoints (signing secrets stored encrypted only) and the per-attempt delivery log.
 */
export class Migration20261123060000_jobs_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table job (
      id uuid primary key,
      queue varchar(64) not null,
      kind varchar(64) not null,
      payload jsonb not null,
      run_at timestamptz not null,
      attempts int not null default 0,
      max_attempts int not null,
      locked_until timestamptz null,
      locked_by varchar(64) null,
      last_error varchar(500) null,
      failed_at timestamptz null,
      created_at timestamptz not null
    );`);
    this.addSql(`create index job_due_idx on job (queue, run_at) where failed_at is null;`);
    this.addSql(`create table webhook_endpoint (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      url varchar(2048) not null,
      event_types jsonb null,
      enabled boolean not null,
      secret_encrypted text not null,
      previous_secret_encrypted text null,
      previous_secret_expires_at timestamptz null,
      failing_since timestamptz null,
      disabled_reason varchar(32) null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );`);
    this.addSql(`create index webhook_endpoint_tenant_idx on webhook_endpoint (tenant_id);`);
    this.addSql(`create table webhook_delivery (
      id uuid primary key,
      tenant_id uuid not null references tenant (id) on delete cascade,
      endpoint_id uuid not null references webhook_endpoint (id) on delete cascade,
      message_id varchar(64) not null,
      event_type varchar(64) not null,
      attempt int not null,
      outcome varchar(16) not null,
      response_status int null,
      latency_ms int null,
      error varchar(200) null,
      next_retry_at timestamptz null,
      created_at timestamptz not null,
      constraint webhook_delivery_outcome_check check (outcome in ('succeeded', 'failed'))
    );`);
    this.addSql(`create index webhook_delivery_endpoint_idx on webhook_delivery (endpoint_id, created_at desc);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists webhook_delivery;');
    this.addSql('drop table if exists webhook_endpoint;');
    this.addSql('drop table if exists job;');
  }
}
