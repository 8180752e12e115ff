import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import type { ClaimedJob, JobQueue } from '../../src/services/jobs/job-queue.js';
import { findLiveTenantById } from '../../src/queries/tenant.js';
import { ndjsonLines, UserImportJobService } from '../../src/services/users/user-import-job-service.js';
import type { UserImportService } from '../../src/services/users/user-import-service.js';
import { createTenant, expectError, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { issueApiKey } from '../helpers/principals.js';
import { eventually } from '../helpers/polling.js';
import { useTestServer } from '../helpers/suite.js';
import { NO_REQUEST_META, userActor } from '../../src/lib/request-scope.js';

/**
 * Import jobs (docs/import.md "Import jobs"): an NDJSON body streamed into a job on the PostgreSQL
 * queue, its progress, failure report and audit event; a job interrupted mid-way resumes with the
 * right counts.
 */
const suite = useTestServer();

function em(): EntityManager {
  return suite.server.services.orm.em.fork() as EntityManager;
}

async function postNdjson(tenant: TestTenant, body: string, token = tenant.accessToken, contentType = 'application/x-ndjson') {
  const res = await fetch(`${suite.server.url}/v1/${tenant.slug}/users/import-jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe('POST users/import-jobs and GET users/import-jobs/{id}', () => {
  it('imports an NDJSON file on the job queue with progress counters, a failure report and one UsersImported event', async () => {
    const tenant = await createTenant(suite.api);
    const existing = await signupMember(suite.api, tenant.slug);
    const hash = bcrypt.hashSync('moved in', 4);
    const emails = Array.from({ length: 2300 }, (_, i) => `job-${i}-${unique()}@example.com`);
    const lines = emails.map((email) => JSON.stringify({ email, emailVerified: true, password: { algorithm: 'bcrypt', hash } }));
    lines.splice(5, 0, '{not json');
    lines.splice(1500, 0, JSON.stringify({ email: 'nope' }), JSON.stringify({ email: existing.email }), '', JSON.stringify({ email: emails[0] }));
    const body = `${lines.join('\r\n')}\n`;

    const res = await postNdjson(tenant, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.job).toMatchObject({ status: 'Queued', total: 2304, processed: 0, created: 0 });
    const id = res.body.job.id as string;

    const done = await eventually(async () => {
      const got = await suite.api.get(`/v1/${tenant.slug}/users/import-jobs/${id}`, { token: tenant.accessToken });
      return got.body.job?.status === 'Completed' ? got.body.job : undefined;
    }, 'the import job to complete', 60_000);
    expect(done).toMatchObject({ total: 2304, processed: 2304, created: 2300, skipped: 2, failed: 2 });
    expect(done.finishedAt).not.toBeNull();

    const report = await fetch(`${suite.server.url}/v1/${tenant.slug}/users/import-jobs/${id}/errors`, { headers: { authorization: `Bearer ${tenant.accessToken}` } });
    expect(report.headers.get('content-type')).toContain('application/x-ndjson');
    expect((await report.text()).trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual([
      { index: 5, reason: 'invalid_json' },
      { index: 1500, reason: 'invalid_email' },
    ]);

    const signIn = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: emails[2000], password: 'moved in' });
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);

    const audit = await em().execute<{ details: Record<string, unknown> }[]>(`select details from audit_event where tenant_id = ? and action = 'UsersImported'`, [tenant.id]);
    expect(audit.map((a) => a.details)).toEqual([{ via: 'job', jobId: id, total: 2304, created: 2300, skipped: 2, failed: 2 }]);
    const leftover = await em().execute<{ n: number }[]>('select count(*)::int as n from user_import_line where job_id = ?', [id]);
    expect(leftover[0]!.n).toBe(0);
  });

  it('refuses a JSON body, an empty file, a Member, a test key; another workspace\'s job is 404', async () => {
    const tenant = await createTenant(suite.api);
    expectError(await suite.api.post(`/v1/${tenant.slug}/users/import-jobs`, {}, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'unsupported_media_type');
    const empty = await postNdjson(tenant, '\n\n');
    expect([empty.status, empty.body.details?.reason]).toEqual([400, 'import_empty']);
    const long = await postNdjson(tenant, `${JSON.stringify({ email: `${'a'.repeat(20_000)}@example.com` })}\n`);
    expect([long.status, long.body.details?.reason]).toEqual([400, 'import_line_too_long']);
    const member = await signupMember(suite.api, tenant.slug);
    expect((await postNdjson(tenant, '{"email":"a@example.com"}', member.accessToken)).status).toBe(403);
    const testKey = await issueApiKey(suite.api, suite.server, tenant);
    const refused = await postNdjson(tenant, '{"email":"a@example.com","role":"Admin"}', testKey.plaintext);
    expect([refused.status, refused.body.details?.reason]).toEqual([403, 'live_key_required']);
    const jobs = await em().execute<{ n: number }[]>('select count(*)::int as n from user_import_job where tenant_id = ?', [tenant.id]);
    expect(jobs[0]!.n).toBe(0);

    const ok = await postNdjson(tenant, `{"email":"one-${unique()}@example.com"}`);
    expect(ok.status).toBe(200);
    const other = await createTenant(suite.api);
    expectError(await suite.api.get(`/v1/${other.slug}/users/import-jobs/${ok.body.job.id}`, { token: other.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expectError(await suite.api.get(`/v1/${tenant.slug}/users/import-jobs/${crypto.randomUUID()}`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
  });
});

describe('UserImportJobService below HTTP', () => {
  /** A queue that records continuations instead of queueing them (the test runs each slice itself). */
  function recordingQueue(): JobQueue & { queued: Record<string, unknown>[] } {
    const queued: Record<string, unknown>[] = [];
    return { queued, enqueue: async (_kind: string, payload: Record<string, unknown>) => void queued.push(payload) } as unknown as JobQueue & { queued: Record<string, unknown>[] };
  }

  async function* chunks(text: string, size: number): AsyncGenerator<Buffer> {
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  }

  it('splits lines across chunk boundaries, multi-byte characters included', async () => {
    const text = '{"email":"é@example.com"}\r\n\n{"email":"b@example.com"}\n  \n{"email":"ü@example.com"}';
    const out: string[] = [];
    for await (const line of ndjsonLines(chunks(text, 3))) out.push(line);
    expect(out).toEqual(['{"email":"é@example.com"}', '{"email":"b@example.com"}', '{"email":"ü@example.com"}']);
  });

  it('a job interrupted mid-way (a slice that fails, then a new service after a restart) completes with the right counts', async () => {
    const services = suite.server.services;
    const orm = services.orm as unknown as MikroORM;
    const apiTenant = await createTenant(suite.api);
    const tenant = (await findLiveTenantById(em(), apiTenant.id)) as Tenant;
    const emails = Array.from({ length: 2500 }, (_, i) => `resume-${i}-${unique()}@example.com`);
    const body = `${emails.map((email) => JSON.stringify({ email })).join('\n')}\n${JSON.stringify({ email: emails[10] })}\n`;

    const queue = recordingQueue();
    const first = new UserImportJobService(orm, queue, services.userImport, 0);
    const job = await first.receive({ em: em(), tenant, actor: userActor(apiTenant.adminId), meta: NO_REQUEST_META }, chunks(body, 4096));
    expect(job).toMatchObject({ status: 'Queued', total: 2501 });
    const claimed = (): ClaimedJob => ({ id: 'q', kind: 'users.import', payload: queue.queued.at(-1)!, attempt: 1, maxAttempts: 10, claimedBy: 'test' });

    await first.run(claimed()); // one chunk (slice of 0 ms), then its continuation is queued
    expect(queue.queued).toHaveLength(2);
    expect(await first.get(em(), tenant.id, job.id)).toMatchObject({ status: 'Running', processed: 1000, created: 1000 });

    // The second chunk fails half-way: its transaction rolls back, nothing of it stays.
    let calls = 0;
    const failing = {
      importBatch: async (...args: Parameters<UserImportService['importBatch']>) => {
        await services.userImport.importBatch(...args);
        calls += 1;
        throw new Error('the process died');
      },
      recordImport: services.userImport.recordImport.bind(services.userImport),
    } as unknown as UserImportService;
    await expect(new UserImportJobService(orm, queue, failing, 0).run(claimed())).rejects.toThrow('the process died');
    expect(calls).toBe(1);
    expect(await first.get(em(), tenant.id, job.id)).toMatchObject({ processed: 1000, created: 1000 });

    // After the restart: a new service runs the queued continuation until the job completes.
    const restarted = new UserImportJobService(orm, queue, services.userImport, 0);
    for (let i = 0; i < 5 && (await restarted.get(em(), tenant.id, job.id)).status !== 'Completed'; i += 1) await restarted.run(claimed());
    expect(await restarted.get(em(), tenant.id, job.id)).toMatchObject({ status: 'Completed', total: 2501, processed: 2501, created: 2500, skipped: 1, failed: 0 });
    const users = await em().execute<{ n: number }[]>('select count(*)::int as n from app_user where tenant_id = ? and imported_at is not null', [tenant.id]);
    expect(users[0]!.n).toBe(2500);
    const audit = await em().execute<{ n: number }[]>(`select count(*)::int as n from audit_event where tenant_id = ? and action = 'UsersImported'`, [tenant.id]);
    expect(audit[0]!.n).toBe(1);
    // Running a finished job again changes nothing.
    await restarted.run(claimed());
    expect((await em().execute<{ n: number }[]>(`select count(*)::int as n from audit_event where tenant_id = ? and action = 'UsersImported'`, [tenant.id]))[0]!.n).toBe(1);
  });

  it('the retention sweep deletes a job whose upload stopped 15 minutes ago, with its lines, and spares one still arriving', async () => {
    const services = suite.server.services;
    const orm = services.orm as unknown as MikroORM;
    const apiTenant = await createTenant(suite.api);
    const tenant = (await findLiveTenantById(em(), apiTenant.id)) as Tenant;
    const importer = new UserImportJobService(orm, recordingQueue(), services.userImport, 0);
    // two jobs as a process that died mid-upload leaves them: still Receiving, one chunk of lines in
    const jobIds: string[] = [];
    for (const minutesAgo of [16, 1]) {
      const id = randomUUID();
      jobIds.push(id);
      await em().execute(
        `insert into user_import_job (id, tenant_id, status, total, processed, created, skipped, failed, actor_type, actor_id, created_at, updated_at)
         values (?, ?, 'Receiving', 0, 0, 0, 0, 0, 'user', ?, now() - make_interval(mins => ?), now() - make_interval(mins => ?))`,
        [id, tenant.id, apiTenant.adminId, minutesAgo + 1, minutesAgo],
      );
      await em().execute('insert into user_import_line (job_id, line_no, payload) values (?, 0, ?)', [id, JSON.stringify({ email: `line-${unique()}@example.com` })]);
    }
    expect(await importer.sweepAbandoned()).toBeGreaterThanOrEqual(1);
    const left = await em().execute<{ id: string }[]>('select id from user_import_job where id in (?)', [jobIds]);
    expect(left.map((row) => row.id)).toEqual([jobIds[1]]);
    expect(await em().execute('select 1 from user_import_line where job_id = ?', [jobIds[0]])).toHaveLength(0);
    expect(await em().execute('select 1 from user_import_line where job_id = ?', [jobIds[1]])).toHaveLength(1);
  });
});
