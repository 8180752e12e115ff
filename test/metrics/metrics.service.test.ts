import { describe, expect, it } from 'vitest';
import { unique } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the Prometheus metrics as `createServices` wires them with `METRICS_ENABLED`
 * (docs/operations.md "Metrics"): the gauges read the instance's own job queue and rate limits at
 * scrape time, and the counters count what the services report.
 */

const suite = useServices({ METRICS_ENABLED: 'true', RATE_LIMIT_SCALE: '1' });

/** The value of one sample line (`name{labels} value`) of the exposition, or undefined. */
function sample(body: string, line: string): number | undefined {
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('Metrics', () => {
  it('reports this instance\'s queue, rate-limit refusals, job runs and requests', async () => {
    const metrics = suite.services.metrics!;
    expect(metrics).toBeDefined();
    await suite.takeQueued();
    await suite.services.jobs.enqueue('webhook.deliver', {}, { maxAttempts: 1 });
    await suite.services.jobs.enqueue('webhook.deliver', {}, { maxAttempts: 1, delaySeconds: 3600 });
    const budget = { name: `svc_metrics_${unique()}`, points: 1, durationSeconds: 60 };
    await suite.services.rateLimits.consume(budget, 'k');
    await suite.services.rateLimits.consume(budget, 'k');
    metrics.jobRun('mail.send', 'retry');
    metrics.observeRequest('auth.refresh', 'POST', 'rest', 200, 0.012);

    const { contentType, body } = await metrics.exposition();
    expect(contentType).toContain('text/plain');
    expect(sample(body, 'idp_job_queue_jobs{state="pending"}')).toBe(2);
    expect(sample(body, 'idp_job_queue_jobs{state="due"}')).toBe(1);
    expect(sample(body, `idp_rate_limit_rejections_total{budget="${budget.name}"}`)).toBe(1);
    expect(sample(body, 'idp_jobs_total{kind="mail.send",outcome="retry"}')).toBe(1);
    expect(sample(body, 'idp_http_requests_total{route="auth.refresh",method="POST",transport="rest",status="200"}')).toBe(1);
    expect(sample(body, 'idp_db_pool_connections{state="max"}')).toBe(suite.config.databasePoolMax);
  });

  // docs/operations.md: the gauge is absent without REDIS_URL (an exported 0 is what the documented
  // alert `idp_rate_limit_store_shared == 0` fires on).
  it('leaves idp_rate_limit_store_shared out without REDIS_URL', async () => {
    const { body } = await suite.services.metrics!.exposition();
    expect(body).not.toMatch(/^idp_rate_limit_store_shared \d/m);
  });
});
