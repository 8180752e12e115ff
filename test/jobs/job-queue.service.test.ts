import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JobQueue, type ClaimedJob } from '../../src/services/jobs/job-queue.js';
import { JobWorker } from '../../src/services/jobs/job-worker.js';
import { eventually } from '../helpers/polling.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the PostgreSQL job queue and its worker (JobQueue, JobWorker; docs/events.md): a job
 * exists only if its transaction commits, one claim at a time, retries with backoff, kept as failed
 * once its attempts are spent. Each test works a queue of its own name.
 */

const suite = useServices();
const freshQueue = (): JobQueue => new JobQueue(suite.orm, `svc-jobs-${randomBytes(6).toString('hex')}`);

describe('JobQueue', () => {
  it('holds a job only when the enqueueing transaction commits', async () => {
    const queue = freshQueue();
    await expect(suite.em().transactional(async (tx) => {
      await queue.enqueue('webhook.deliver', { n: 1 }, { maxAttempts: 1 }, tx);
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    expect((await queue.stats()).pending).toBe(0);
    await suite.em().transactional((tx) => queue.enqueue('webhook.deliver', { n: 2 }, { maxAttempts: 1 }, tx));
    expect(await queue.stats()).toMatchObject({ pending: 1, due: 1, failed: 0 });
  });

  it('hands a job to one of two concurrent claims, and not again while its lease holds', async () => {
    const queue = freshQueue();
    await queue.enqueue('webhook.deliver', {}, { maxAttempts: 3 });
    const [a, b] = await Promise.all([queue.claim('worker-a', 5), queue.claim('worker-b', 5)]);
    expect(a.length + b.length).toBe(1);
    expect(await queue.claim('worker-c', 5)).toEqual([]);
    const [job] = [...a, ...b];
    expect(job!.attempt).toBe(1);
    // only its holder may complete it
    await queue.complete(job!, a.length ? 'worker-b' : 'worker-a');
    expect((await queue.stats()).pending).toBe(1);
    await queue.complete(job!, a.length ? 'worker-a' : 'worker-b');
    expect((await queue.stats()).pending).toBe(0);
  });

  it('runs a job through failures until it succeeds, and keeps one that never does as failed', async () => {
    const queue = freshQueue();
    const worker = new JobWorker(queue, suite.services.logger, { pollIntervalMs: 20, retryBaseSeconds: 0.05 });
    const runs = new Map<string, number[]>();
    worker.handle('webhook.deliver', async (job: ClaimedJob) => {
      const name = String(job.payload.name);
      runs.set(name, [...(runs.get(name) ?? []), job.attempt]);
      if (name === 'never' || job.attempt < 3) throw new Error(`attempt ${job.attempt} of ${name} failed`);
    });
    await queue.enqueue('webhook.deliver', { name: 'third-time' }, { maxAttempts: 5 });
    await queue.enqueue('webhook.deliver', { name: 'never' }, { maxAttempts: 2 });
    worker.start();
    try {
      await eventually(async () => {
        const stats = await queue.stats();
        return stats.pending === 0 && stats.failed === 1 ? stats : undefined;
      }, 'both jobs to finish', 15_000);
    } finally {
      await worker.stop();
    }
    expect(runs.get('third-time')).toEqual([1, 2, 3]);
    expect(runs.get('never')).toEqual([1, 2]);
  });
});
