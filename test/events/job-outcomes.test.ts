import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { JobQueue } from '../../src/services/jobs/job-queue.js';
import { JobWorker } from '../../src/services/jobs/job-worker.js';
import { Api, createTenant, unique, type TestTenant } from '../helpers/api.js';
import { eventually } from '../helpers/polling.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * The job worker when the database goes away under a running job (docs/events.md "Delivery
 * guarantees"): the outcome of a job that did its work is written once the database is back (the job
 * does not run again), a running job's lease is extended so no other worker takes it, and the
 * webhook delivery log holds every attempt.
 */
describe.skipIf(inject('embeddedDatabase'))('a webhook delivered while the database is away', () => {
  let proxy: TcpProxy;
  let server: TestServer;
  let api: Api;
  let tenant: TestTenant;
  let receiver: http.Server;
  const received: string[] = [];
  let onDelivery: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const target = new URL(inject('databaseUrl'));
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(target);
    viaProxy.port = String(proxy.port);
    server = await startTestServer({ DATABASE_URL: viaProxy.toString(), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    api = new Api(server.url);
    tenant = await createTenant(api);
    receiver = http.createServer((req, res) => {
      received.push(String(req.headers['webhook-id']));
      req.resume();
      const hook = onDelivery;
      onDelivery = undefined;
      void (hook ?? (() => Promise.resolve()))().then(() => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('is recorded as delivered once the database is back: one POST, job gone, log row succeeded', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook-${unique()}`;
    const created = await api.post(`/v1/${tenant.slug}/webhooks`, { url, eventTypes: ['UserSignup'] }, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.webhook.id as string;
    // The database disappears while the receiver holds the request, and comes back 1.5 s later.
    onDelivery = async () => {
      await proxy.down();
      setTimeout(() => void proxy.up(), 1500);
    };
    expect((await api.post(`/v1/${tenant.slug}/webhooks/${id}/test`, {}, { token: tenant.accessToken })).status).toBe(200);
    const em = () => server.services.orm.em.fork();
    await eventually(async () => {
      const jobs = await em().execute(`select 1 from job where kind = 'webhook.deliver' and payload->>'endpointId' = ?`, [id]).catch(() => [1]);
      return jobs.length === 0 ? true : undefined;
    }, 'the delivery job is completed');
    const log = await em().execute<{ outcome: string }[]>('select outcome from webhook_delivery where endpoint_id = ?', [id]);
    expect(log.map((r) => r.outcome)).toEqual(['succeeded']);
    expect(received.filter((m) => m === received[0])).toHaveLength(1);
    expect(server.logs.some((l) => l.includes('job outcome recorded after retries') || l.includes('webhook delivery log not finished yet'))).toBe(true);
    // Nothing is run again later either (a lease of 30 s would have brought it back by now without the outcome).
    expect(received).toHaveLength(1);
  });
});

describe.skipIf(inject('embeddedDatabase'))('the lease of a running job', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is extended while the job runs: a job longer than its lease runs on one worker only', async () => {
    const queue = new JobQueue(server.services.orm, `lease-${unique()}`, 1);
    const logger = pino({ level: 'silent' });
    const runs: string[] = [];
    const workers = [1, 2].map((n) => {
      const worker = new JobWorker(queue, logger, { pollIntervalMs: 25, retryBaseSeconds: 0.05 });
      worker.handle('mail.send', async (job) => {
        runs.push(`${n}:${job.id}`);
        await new Promise((resolve) => setTimeout(resolve, 2500)); // two and a half leases
      });
      return worker;
    });
    const id = await queue.enqueue('mail.send', {}, { maxAttempts: 3 });
    for (const w of workers) w.start();
    try {
      await eventually(async () => {
        const rows = await server.services.orm.em.fork().execute('select 1 from job where id = ?', [id]);
        return rows.length === 0 ? true : undefined;
      }, 'the job completes');
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    expect(runs).toHaveLength(1);
  });
});
