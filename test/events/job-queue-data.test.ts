import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailRecipientDigests } from '../../src/services/mail/mailer.js';
import { Api, createTenant, signupMember, unique } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { closedPort, eventually } from '../helpers/polling.js';

const DAY_MS = 86_400_000;

describe('job queue retention', () => {
  let server: TestServer;
  beforeAll(async () => {
    // the sweep runs every 0.2 s here; the retention periods are the defaults (7 days, 30 days)
    server = await startTestServer({ JOB_RETENTION_SWEEP_SECONDS: '0.2' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('deletes failed jobs older than JOB_FAILED_RETENTION_DAYS and delivery-log rows older than WEBHOOK_DELIVERY_RETENTION_DAYS, and keeps recent ones', async () => {
    const api = new Api(server.url);
    const tenant = await createTenant(api);
    const hook = await api.post(`/v1/${tenant.slug}/webhooks`, { url: 'https://hooks.example.com/in', eventTypes: ['InviteExpired'] }, { token: tenant.accessToken });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const em = server.services.orm.em.fork();
    const now = Date.now();
    const failedJob = async (queue: string, failedAgoMs: number) => {
      const id = randomUUID();
      await em.execute(
        `insert into job (id, queue, kind, payload, run_at, attempts, max_attempts, created_at, failed_at, last_error)
         values (?, ?, 'webhook.deliver', '{}'::jsonb, ?, 3, 3, ?, ?, 'endpoint answered 500')`,
        [id, queue, new Date(now - failedAgoMs), new Date(now - failedAgoMs), new Date(now - failedAgoMs)],
      );
      return id;
    };
    const delivery = async (agoMs: number) => {
      const id = randomUUID();
      await em.execute(
        `insert into webhook_delivery (id, tenant_id, endpoint_id, message_id, event_type, attempt, outcome, response_status, latency_ms, created_at)
         values (?, ?, ?, ?, 'InviteExpired', 1, 'failed', 500, 12, ?)`,
        [id, tenant.id, hook.body.webhook.id, `msg_${randomUUID()}`, new Date(now - agoMs)],
      );
      return id;
    };
    const queue = server.services.jobs.name;
    const oldFailed = await failedJob(queue, 8 * DAY_MS);
    const recentFailed = await failedJob(queue, 6 * DAY_MS);
    // another deployment's queue (its own retention setting applies): left alone
    const otherQueueOld = await failedJob(`other-${unique()}`, 8 * DAY_MS);
    const oldDelivery = await delivery(31 * DAY_MS);
    const recentDelivery = await delivery(29 * DAY_MS);

    const jobExists = async (id: string) => (await em.execute('select 1 from job where id = ?', [id])).length > 0;
    const deliveryExists = async (id: string) => (await em.execute('select 1 from webhook_delivery where id = ?', [id])).length > 0;
    await eventually(async () => (!(await jobExists(oldFailed)) && !(await deliveryExists(oldDelivery)) ? true : undefined), 'the retention sweep');

    expect(await jobExists(recentFailed)).toBe(true);
    expect(await jobExists(otherQueueOld)).toBe(true);
    expect(await deliveryExists(recentDelivery)).toBe(true);
    // the delivery log read through the API shows the recent attempt only
    const log = await api.get(`/v1/${tenant.slug}/webhooks/${hook.body.webhook.id}/deliveries`, { token: tenant.accessToken });
    expect(log.status).toBe(200);
    expect((log.body.items as { id: string }[]).map((item) => item.id)).toEqual([recentDelivery]);
    expect(server.logs.some((line) => line.includes('job queue retention sweep deleted expired rows'))).toBe(true);
    await em.execute('delete from job where id in (?, ?)', [recentFailed, otherQueueOld]);
  });
});

describe('erasing a user removes the queued jobs that carry their address', () => {
  let server: TestServer;
  let idle: TestServer;
  beforeAll(async () => {
    // SMTP is down: mails stay in the queue (retried, then kept as failed)
    server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` });
    // an instance whose worker is off: its account-mail requests (email, IP, user agent) stay queued
    idle = await startTestServer({ JOB_WORKER: 'false' });
  });
  afterAll(async () => {
    await server.close();
    await idle.close();
  });

  const em = () => server.services.orm.em.fork();
  /** Queued jobs of `kind` (any queue, waiting or failed) about `email` in tenant `tenantId`, found by their recipient digest. */
  const queued = async (kind: 'mail.send' | 'account-mail.request', tenantId: string, email: string) => {
    const digests = mailRecipientDigests(server.services.keyring, tenantId, email);
    const rows = await em().execute(`select id from job where kind = ? and recipient_digest in (${digests.map(() => '?').join(', ')})`, [kind, ...digests]);
    return rows.length;
  };
  const mailJobs = (tenantId: string, email: string) => queued('mail.send', tenantId, email);
  const requestJobs = (tenantId: string, email: string) => queued('account-mail.request', tenantId, email);
  /** Job rows of any kind and queue whose payload shows `email` in clear. */
  const jobsNaming = async (email: string) => (await em().execute(`select id from job where payload::text ilike ?`, [`%${email}%`])).length;

  /** Queues, for `email` in tenant `slug`: a mail (worker up, SMTP down) and an account-mail request (worker off). */
  async function queueMailFor(slug: string, tenantId: string, email: string): Promise<void> {
    const api = new Api(server.url);
    expect((await api.post(`/v1/${slug}/auth/password-reset/request`, { email })).status).toBe(200);
    expect((await new Api(idle.url).post(`/v1/${slug}/auth/request-email-verification`, { email })).status).toBe(200);
    await eventually(async () => ((await mailJobs(tenantId, email)) > 0 ? true : undefined), 'the queued reset mail');
    // the running worker finishes its own request job; the idle instance's stays
    await eventually(async () => ((await requestJobs(tenantId, email)) === 1 ? true : undefined), 'one waiting request');
    expect(await jobsNaming(email)).toBe(0); // both are encrypted
  }

  it('DELETE me: the user\'s queued mails and requests go in the same transaction; the same address in another tenant keeps its mail', async () => {
    const api = new Api(server.url);
    const tenant = await createTenant(api);
    const other = await createTenant(api);
    const email = `erased-${unique()}@example.com`;
    const member = await signupMember(api, tenant.slug, email);
    await signupMember(api, other.slug, email);
    await queueMailFor(tenant.slug, tenant.id, email);
    expect((await api.post(`/v1/${other.slug}/auth/password-reset/request`, { email })).status).toBe(200);
    await eventually(async () => ((await mailJobs(other.id, email)) > 0 ? true : undefined), 'the other tenant\'s mail');

    expect((await api.delete(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);

    expect(await mailJobs(tenant.id, email)).toBe(0);
    expect(await requestJobs(tenant.id, email)).toBe(0);
    expect(await mailJobs(other.id, email)).toBeGreaterThan(0);
    // the deletion event itself is still queued for webhooks (ids only, no address in the job)
    const deletedEvents = await em().execute(
      `select 1 from audit_event where tenant_id = ? and action = 'UserSoftDeleted' and target_id = ?`, [tenant.id, member.id],
    );
    expect(deletedEvents).toHaveLength(1);
  });

  it('admin delete: the same; another tenant\'s admin cannot delete (and so cannot discard) the user', async () => {
    const api = new Api(server.url);
    const tenant = await createTenant(api);
    const attacker = await createTenant(api);
    const email = `removed-${unique()}@example.com`;
    const member = await signupMember(api, tenant.slug, email);
    await queueMailFor(tenant.slug, tenant.id, email);

    const foreign = await api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: attacker.accessToken });
    expect(foreign.status).toBeGreaterThanOrEqual(400);
    expect(await mailJobs(tenant.id, email)).toBeGreaterThan(0);
    expect(await requestJobs(tenant.id, email)).toBe(1);

    expect((await api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).status).toBe(200);
    expect(await mailJobs(tenant.id, email)).toBe(0);
    expect(await requestJobs(tenant.id, email)).toBe(0);
  });

  it('the erasure sweep removes what was queued for the address after the soft deletion', async () => {
    const api = new Api(server.url);
    const tenant = await createTenant(api);
    const email = `swept-${unique()}@example.com`;
    const member = await signupMember(api, tenant.slug, email);
    expect((await api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).status).toBe(200);
    // after the deletion: an invite mail to the address and a request naming it
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email }, { token: tenant.accessToken });
    expect(invite.status, JSON.stringify(invite.body)).toBe(200);
    expect((await new Api(idle.url).post(`/v1/${tenant.slug}/auth/password-reset/request`, { email })).status).toBe(200);
    await eventually(async () => ((await mailJobs(tenant.id, email)) > 0 ? true : undefined), 'the invite mail');
    expect(await requestJobs(tenant.id, email)).toBe(1);

    // age this user's deletion past USER_RETENTION_DAYS (the sweep then erases it; other files' users stay recent)
    const agedAt = new Date(Date.now() - (server.services.config.userRetentionDays + 1) * DAY_MS);
    await em().execute('update app_user set deleted_at = ? where id = ? and tenant_id = ?', [agedAt, member.id, tenant.id]);
    const swept = await server.services.erasure.sweepExpired(em());
    expect(swept.userIds).toContain(member.id);
    expect(await mailJobs(tenant.id, email)).toBe(0);
    expect(await requestJobs(tenant.id, email)).toBe(0);
  });
});
