import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Api, createTenant, expectError, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startTestServer, TEST_ENCRYPTION_KEYS, TEST_JWT_SECRET, type TestServer } from '../helpers/server.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually as poll } from '../helpers/polling.js';
import { systemScope } from '../../src/lib/request-scope.js';

/** Deliveries go through retries and backoff: wait up to 30 s. */
const eventually = <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> => poll(probe, what, 30_000);

const ALLOW_PRIVATE = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };

async function createWebhook(api: Api, tenant: TestTenant, receiver: WebhookReceiver, eventTypes?: string[]) {
  const res = await api.post(`/v1/${tenant.slug}/webhooks`, { url: receiver.url, eventTypes }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  receiver.secrets.push(res.body.secret as string);
  return res.body.webhook as { id: string; url: string; eventTypes: string[] | null; enabled: boolean };
}

const deliveries = async (api: Api, tenant: TestTenant, id: string) =>
  (await api.get(`/v1/${tenant.slug}/webhooks/${id}/deliveries`, { token: tenant.accessToken })).body.items as {
    messageId: string; eventType: string; attempt: number; outcome: string; responseStatus: number | null; error: string | null; nextRetryAt: string | null; latencyMs: number | null;
  }[];

/** Webhook jobs of one tenant still queued (a delivered job is deleted). */
const pendingWebhookJobs = async (server: TestServer, tenant: TestTenant) =>
  (await server.services.orm.em.fork().execute(`select 1 from job where kind = 'webhook.deliver' and payload->>'tenantId' = ?`, [tenant.id])).length;

describe('webhooks', () => {
  let server: TestServer;
  let api: Api;
  let tenant: TestTenant;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    server = await startTestServer(ALLOW_PRIVATE);
    api = new Api(server.url);
    tenant = await createTenant(api);
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(async () => {
    await receiver?.stop();
  });

  it('manages endpoints: secret shown once, list, update, rotate, delete; audited without the secret; other tenants see 404', async () => {
    receiver = await startWebhookReceiver();
    const created = await api.post(`/v1/${tenant.slug}/webhooks`, { url: receiver.url, eventTypes: ['UserSignup'] }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const id = created.body.webhook.id as string;
    expect(created.body.webhook).toMatchObject({ url: receiver.url, eventTypes: ['UserSignup'], enabled: true, disabledReason: null });

    const list = await api.get(`/v1/${tenant.slug}/webhooks`, { token: tenant.accessToken });
    expect(list.body.items.map((w: { id: string }) => w.id)).toContain(id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');

    const patched = await api.patch(`/v1/${tenant.slug}/webhooks/${id}`, { eventTypes: null, enabled: false }, { token: tenant.accessToken });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ eventTypes: null, enabled: false });

    const rotated = await api.post(`/v1/${tenant.slug}/webhooks/${id}/rotate-secret`, {}, { token: tenant.accessToken });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);

    const rows = await server.services.orm.em.fork().execute<{ secret_encrypted: string }[]>('select secret_encrypted from webhook_endpoint where id = ?', [id]);
    expect(rows[0]!.secret_encrypted).not.toContain(String(rotated.body.secret).slice(6));

    const other = await createTenant(api);
    expectError(await api.patch(`/v1/${other.slug}/webhooks/${id}`, { enabled: true }, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await api.delete(`/v1/${other.slug}/webhooks/${id}`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await api.get(`/v1/${other.slug}/webhooks/${id}/deliveries`, { token: other.accessToken }), 404, 'NOT_FOUND');
    expectError(await api.post(`/v1/${tenant.slug}/webhooks`, { url: receiver.url, eventTypes: ['NotAnAction'] }, { token: tenant.accessToken }), 400, 'BAD_REQUEST');

    expect((await api.delete(`/v1/${tenant.slug}/webhooks/${id}`, { token: tenant.accessToken })).body).toEqual({ ok: true });
    expectError(await api.delete(`/v1/${tenant.slug}/webhooks/${id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND');

    const audit = await api.get(`/v1/${tenant.slug}/audit?action=TenantUpdated`, { token: tenant.accessToken });
    const changes = audit.body.items.filter((e: { targetId: string }) => e.targetId === id).map((e: { details: { webhook: string } }) => e.details.webhook);
    expect(changes.sort()).toEqual(['created', 'deleted', 'secret_rotated', 'updated']);
    expect(JSON.stringify(audit.body)).not.toContain('whsec_');
  });

  it('delivers subscribed events signed per Standard Webhooks, with the audit item and no secret; others are not sent', async () => {
    receiver = await startWebhookReceiver();
    const t = await createTenant(api);
    const hook = await createWebhook(api, t, receiver, ['UserSignup']);
    const member = await signupMember(api, t.slug);
    const [delivery] = await receiver.waitFor(1, (w) => w.body.type === 'UserSignup');
    expect(delivery!.id).toMatch(/^msg_/);
    expect(delivery!.body.data).toMatchObject({ action: 'UserSignup', targetId: member.id });
    expect(delivery!.raw).not.toContain('whsec_');
    expect(delivery!.raw).not.toContain('correct horse');
    expect(receiver.rejected).toEqual([]);
    const log = await eventually(async () => {
      const items = await deliveries(api, t, hook.id);
      return items.length > 0 ? items : undefined;
    }, 'the delivery log');
    expect(log[0]).toMatchObject({ messageId: delivery!.id, eventType: 'UserSignup', attempt: 1, outcome: 'succeeded', responseStatus: 204, error: null, nextRetryAt: null });
    await eventually(async () => ((await pendingWebhookJobs(server, t)) === 0 ? true : undefined), 'the queue to drain');
    // the member's own login (UserLogin, SessionCreated) was not subscribed
    expect(receiver.received.every((w) => w.body.type === 'UserSignup')).toBe(true);
  });

  it('queues a delivery only for an audit event whose transaction committed (outbox)', async () => {
    receiver = await startWebhookReceiver();
    const t = await createTenant(api);
    await createWebhook(api, t, receiver, ['UserHardDeleted']);
    const { audit, orm } = server.services;
    const event = (probe: string) => ({ action: 'UserHardDeleted' as const, details: { probe } });
    await expect(
      orm.em.fork().transactional(async (tx) => {
        await audit.record(systemScope(tx, t.id), event('rolled-back'));
        throw new Error('abort the operation');
      }),
    ).rejects.toThrow('abort the operation');
    await orm.em.fork().transactional((tx) => audit.record(systemScope(tx, t.id), event('committed')));
    await receiver.waitFor(1, (w) => w.body.type === 'UserHardDeleted');
    await eventually(async () => ((await pendingWebhookJobs(server, t)) === 0 ? true : undefined), 'the queue to drain');
    expect(receiver.received.map((w) => (w.body.data.details as { probe: string }).probe)).toEqual(['committed']);
  });

  it('sends a test event, and signs with both secrets during a rotation overlap', async () => {
    receiver = await startWebhookReceiver();
    const t = await createTenant(api);
    const hook = await createWebhook(api, t, receiver);
    const oldSecret = receiver.secrets[0]!;
    const rotated = await api.post(`/v1/${t.slug}/webhooks/${hook.id}/rotate-secret`, {}, { token: t.accessToken });
    receiver.secrets.splice(0, receiver.secrets.length, rotated.body.secret as string); // new secret only
    expect((await api.post(`/v1/${t.slug}/webhooks/${hook.id}/test`, {}, { token: t.accessToken })).body).toEqual({ ok: true });
    const [test] = await receiver.waitFor(1, (w) => w.body.type === 'WebhookTest');
    expect(test!.body.data).toEqual({ webhookId: hook.id });
    receiver.secrets.splice(0, receiver.secrets.length, oldSecret); // the old secret verifies the same delivery
    expect(String(test!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const { Webhook } = await import('standardwebhooks');
    expect(() => new Webhook(oldSecret).verify(test!.raw, Object.fromEntries(Object.entries(test!.headers).map(([k, v]) => [k, String(v)])))).not.toThrow();
  });

  it('retries while the receiver is down and delivers every event once it is up, each with its stable id', async () => {
    receiver = await startWebhookReceiver();
    const t = await createTenant(api);
    const hook = await createWebhook(api, t, receiver, ['UserSignup']);
    await receiver.stop();
    const members = [];
    for (let i = 0; i < 3; i++) members.push(await signupMember(api, t.slug));
    // the failed attempts only: a retry may be under way (`attempting`) when the log is read
    const failed = await eventually(async () => {
      const items = (await deliveries(api, t, hook.id)).filter((d) => d.outcome === 'failed');
      return items.length >= 6 ? items : undefined;
    }, 'failed attempts');
    expect(failed.some((d) => d.attempt >= 2)).toBe(true);
    expect(failed.every((d) => d.outcome === 'failed' && d.responseStatus === null && d.nextRetryAt !== null)).toBe(true);
    expect(receiver.received).toHaveLength(0);

    await receiver.start();
    const got = await receiver.waitFor(3, (w) => w.body.type === 'UserSignup');
    await eventually(async () => ((await pendingWebhookJobs(server, t)) === 0 ? true : undefined), 'the queue to drain');
    expect(new Set(receiver.received.map((w) => w.id)).size).toBe(3);
    expect(receiver.received).toHaveLength(3);
    expect(got.map((w) => w.body.data.targetId).sort()).toEqual(members.map((m) => m.id).sort());
    // the id seen by the receiver is the one every failed attempt carried
    const ids = new Set(failed.map((d) => d.messageId));
    expect(got.every((w) => ids.has(w.id))).toBe(true);
  });

  it('disables an endpoint failing too long and mails the tenant admins', async () => {
    const sink = await startSmtpSink();
    const local = await startTestServer({ ...ALLOW_PRIVATE, WEBHOOK_DISABLE_AFTER_SECONDS: '1', SMTP_URL: sink.url });
    try {
      const localApi = new Api(local.url);
      receiver = await startWebhookReceiver();
      receiver.status = 500;
      const t = await createTenant(localApi);
      const hook = await createWebhook(localApi, t, receiver);
      await localApi.post(`/v1/${t.slug}/webhooks/${hook.id}/test`, {}, { token: t.accessToken });
      const mail = await sink.waitFor(t.adminEmail, (m) => m.subject.startsWith('A webhook was turned off'), 30_000);
      expect(mail.text).toContain(receiver.url);
      const list = await localApi.get(`/v1/${t.slug}/webhooks`, { token: t.accessToken });
      expect(list.body.items[0]).toMatchObject({ id: hook.id, enabled: false, disabledReason: 'failing' });
      // a test delivery is retried even to a disabled endpoint: the next retry may be under way
      // (`attempting`) when the log is read; every finished attempt failed with the 500
      const finished = (await deliveries(localApi, t, hook.id)).filter((d) => d.outcome !== 'attempting');
      expect(finished.length).toBeGreaterThan(0);
      expect(finished.every((d) => d.outcome === 'failed' && d.responseStatus === 500)).toBe(true);
    } finally {
      await local.close();
      await sink.close();
    }
  });
});

describe('webhook targets (SSRF)', () => {
  it('refuses private, loopback, link-local, credentialed and plain-http targets at creation', async () => {
    const server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const api = new Api(server.url);
      const t = await createTenant(api);
      for (const url of [
        'http://127.0.0.1:8080/hook', 'https://127.0.0.1/hook', 'https://localhost/hook', 'https://10.1.2.3/hook', 'https://192.168.0.1/',
        'https://172.16.0.9/', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/', 'https://[fd00::1]/', 'https://[::ffff:127.0.0.1]/',
        'https://0.0.0.0/', 'http://example.com/hook', 'https://user:pw@example.com/hook', 'ftp://example.com/',
      ]) {
        const res = await api.post(`/v1/${t.slug}/webhooks`, { url }, { token: t.accessToken });
        expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(400);
      }
      const ok = await api.post(`/v1/${t.slug}/webhooks`, { url: 'https://hooks.example.com/in' }, { token: t.accessToken });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses to deliver to a private address when the deployment does not allow it', async () => {
    const receiver = await startWebhookReceiver();
    const permissive = await startTestServer(ALLOW_PRIVATE);
    const api = new Api(permissive.url);
    const t = await createTenant(api);
    const hook = await createWebhook(api, t, receiver, ['UserSignup']);
    await permissive.close();
    const strict = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const strictApi = new Api(strict.url);
      await strictApi.post(`/v1/${t.slug}/webhooks/${hook.id}/test`, {}, { token: t.accessToken });
      const log = await eventually(async () => {
        // an attempt is logged as `attempting` before its outcome: wait for the outcome
        const items = (await deliveries(strictApi, t, hook.id)).filter((d) => d.eventType === 'WebhookTest' && d.outcome !== 'attempting');
        return items.length > 0 ? items : undefined;
      }, 'a refused attempt');
      expect(log[0]).toMatchObject({ outcome: 'failed', responseStatus: null });
      expect(log[0]!.error).toMatch(/non-public/);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await strict.close();
      await receiver.stop();
    }
  });
});

describe('several instances on one queue', () => {
  it('three instances deliver each event exactly once', async () => {
    const receiver = await startWebhookReceiver();
    const queue = { JOB_QUEUE: `shared-${unique()}` };
    const instances = await Promise.all([1, 2, 3].map(() => startTestServer({ ...ALLOW_PRIVATE, ...queue })));
    try {
      const apis = instances.map((s) => new Api(s.url));
      const t = await createTenant(apis[0]!);
      await createWebhook(apis[0]!, t, receiver, ['ApiKeyCreated']);
      const keys: string[] = [];
      for (let i = 0; i < 15; i++) {
        const res = await apis[i % 3]!.post(`/v1/${t.slug}/api-keys`, { name: `k${i}`, environment: 'test' }, { token: t.accessToken });
        expect(res.status).toBe(200);
        keys.push(res.body.apiKey.id as string);
      }
      await receiver.waitFor(15);
      await eventually(async () => ((await pendingWebhookJobs(instances[0]!, t)) === 0 ? true : undefined), 'the queue to drain');
      expect(receiver.received).toHaveLength(15);
      expect(new Set(receiver.received.map((w: ReceivedWebhook) => w.id)).size).toBe(15);
      expect(receiver.received.map((w) => w.body.data.targetId).sort()).toEqual([...keys].sort());
    } finally {
      await Promise.all(instances.map((s) => s.close()));
      await receiver.stop();
    }
  });
});

/** Runs `src/main.ts` as `npm start` would, as a child process that can be killed. */
function startProcess(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let out = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'idp-proc-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

describe('a crash between the answer and the delivery', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await sink.close();
  });

  it('loses neither the webhook nor the mail: another instance delivers them after the SIGKILL', async () => {
    const receiver = await startWebhookReceiver();
    const queue = { JOB_QUEUE: `crash-${unique()}` };
    // the killed instance answers but never runs its queue (JOB_WORKER=false), so nothing was sent before the kill
    const { child, output } = startProcess({
      PORT: '0', HOST: '127.0.0.1', DATABASE_URL: inject('databaseUrl'), JWT_SECRET: TEST_JWT_SECRET, ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      JOB_WORKER: 'false', SMTP_URL: sink.url, RATE_LIMIT_SCALE: '1000', DATABASE_POOL_MAX: inject('embeddedDatabase') ? '1' : '5',
      ...ALLOW_PRIVATE, ...queue,
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let port = 0;
    for (let i = 0; i < 600 && !port; i++) {
      port = Number(/"port":(\d+).*"msg":"listening"/.exec(output())?.[1] ?? 0);
      if (!port) await new Promise((r) => setTimeout(r, 100));
    }
    expect(port, output()).toBeGreaterThan(0);
    const api = new Api(`http://127.0.0.1:${port}`);
    const t = await createTenant(api);
    await createWebhook(api, t, receiver, ['UserSignup']);
    const member = await signupMember(api, t.slug, `crash-${unique()}@example.com`);
    expect((await api.post(`/v1/${t.slug}/auth/password-reset/request`, { email: member.email })).status).toBe(200);
    child.kill('SIGKILL');
    await exited;
    expect(receiver.received).toHaveLength(0);
    expect(sink.messages.filter((m) => m.to.includes(member.email))).toHaveLength(0);

    const survivor = await startTestServer({ ...ALLOW_PRIVATE, ...queue, SMTP_URL: sink.url });
    try {
      const [hook] = await receiver.waitFor(1, (w) => w.body.type === 'UserSignup');
      expect(hook!.body.data.targetId).toBe(member.id);
      const mail = await sink.waitFor(member.email, undefined, 30_000);
      expect(mail.text).toMatch(/reset/i);
    } finally {
      await survivor.close();
      await receiver.stop();
    }
  });
});
