import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Where the gauges read their figures at scrape time. */
export interface MetricsSources {
  /** Jobs of this instance's queue: waiting, due now, failed for good; seconds the oldest due job has waited (0 when none). */
  queueStats: () => Promise<{ pending: number; due: number; failed: number; oldestDueSeconds: number }>;
  /** The database pool: connections in use, idle, requests waiting for one, the most it opens; undefined when unknown. */
  pool: () => { used: number; free: number; pending: number; max: number } | undefined;
  /**
   * Rate limits: whether the shared store (Redis) is in use, undefined without one; decisions taken on
   * in-process counters; requests refused, by budget name, since start.
   */
  rateLimits: () => { shared: boolean | undefined; fallbackDecisions: number; rejections: ReadonlyMap<string, number> };
}

/** Outcomes of one job run, as counted by `idp_jobs_total`. */
export type JobRunOutcome = 'completed' | 'retry' | 'failed';

/**
 * The Prometheus metrics of one instance (prom-client; docs/operations.md "Metrics"), served on their
 * own port when `METRICS_ENABLED`. Requests are labelled by route (the tRPC procedure path, e.g.
 * `auth.refresh`, never the raw URL with its ids and slugs), method, transport and status.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'method' | 'transport' | 'status'>;
  private readonly latency: Histogram<'route' | 'method' | 'transport' | 'status'>;
  private readonly jobs: Counter<'kind' | 'outcome'>;
  private readonly webhooks: Counter<'outcome'>;
  private readonly inFlight: Gauge;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'idp_http_requests_total', help: 'HTTP requests answered, by route pattern, method, transport and status',
      labelNames: ['route', 'method', 'transport', 'status'], registers,
    });
    this.latency = new Histogram({
      name: 'idp_http_request_duration_seconds', help: 'Time from request to the end of the answer, in seconds',
      labelNames: ['route', 'method', 'transport', 'status'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    });
    this.jobs = new Counter({
      name: 'idp_jobs_total', help: 'Job runs by kind and outcome (completed, retry = failed and rescheduled, failed = failed for good)',
      labelNames: ['kind', 'outcome'], registers,
    });
    this.inFlight = new Gauge({
      name: 'idp_http_requests_in_flight', help: 'Requests received and not yet answered (or abandoned by their client)', registers,
    });
    this.webhooks = new Counter({
      name: 'idp_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (succeeded, failed)', labelNames: ['outcome'], registers,
    });
    new Gauge({
      name: 'idp_job_queue_jobs', help: 'Jobs of this instance\'s queue by state (pending, due, failed)', labelNames: ['state'], registers,
      async collect() {
        try {
          const stats = await sources.queueStats();
          this.set({ state: 'pending' }, stats.pending);
          this.set({ state: 'due' }, stats.due);
          this.set({ state: 'failed' }, stats.failed);
        } catch {
          this.reset(); // the database is away: no figure rather than a stale one
        }
      },
    });
    new Gauge({
      name: 'idp_job_queue_oldest_due_seconds', help: 'Seconds the oldest due job of this instance\'s queue has waited to run (0 when none is due)', registers,
      async collect() {
        try {
          this.set((await sources.queueStats()).oldestDueSeconds);
        } catch {
          this.reset();
        }
      },
    });
    new Gauge({
      name: 'idp_db_pool_connections', help: 'Database pool connections by state (used, free, pending = requests waiting, max = the most the pool opens)', labelNames: ['state'], registers,
      collect() {
        const pool = sources.pool();
        if (!pool) return;
        this.set({ state: 'used' }, pool.used);
        this.set({ state: 'free' }, pool.free);
        this.set({ state: 'pending' }, pool.pending);
        this.set({ state: 'max' }, pool.max);
      },
    });
    // Registered only with Redis: without REDIS_URL the gauge is absent (an unlabelled gauge that was
    // reset would still export 0, which is what the documented alert fires on).
    if (sources.rateLimits().shared !== undefined) {
      new Gauge({
        name: 'idp_rate_limit_store_shared', help: '1 while rate limits are counted in Redis (shared), 0 while on in-process counters (Redis down); absent without REDIS_URL',
        registers,
        collect() {
          this.set(sources.rateLimits().shared ? 1 : 0);
        },
      });
    }
    new Counter({
      name: 'idp_rate_limit_fallback_decisions_total', help: 'Rate-limit decisions taken on in-process counters because Redis was unreachable',
      registers,
      collect() {
        this.reset();
        this.inc(sources.rateLimits().fallbackDecisions);
      },
    });
    new Counter({
      name: 'idp_rate_limit_rejections_total', help: 'Requests refused with 429 by a rate limit, by budget (docs/api-rules.md "Rate limits")', labelNames: ['budget'], registers,
      collect() {
        this.reset();
        for (const [budget, count] of sources.rateLimits().rejections) this.inc({ budget }, count);
      },
    });
  }

  /** A request arrived (the in-flight gauge); {@link requestEnded} once it is answered or abandoned. */
  requestStarted(): void {
    this.inFlight.inc();
  }

  /** A request counted by {@link requestStarted} left: answered, or its client went away. */
  requestEnded(): void {
    this.inFlight.dec();
  }

  /** Counts one answered request; `route` is a pattern (procedure path or fixed name), never a raw path. */
  observeRequest(route: string, method: string, transport: 'rest' | 'trpc' | 'other', status: number, seconds: number): void {
    const labels = { route, method, transport, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  /** Counts one job run's outcome. */
  jobRun(kind: string, outcome: JobRunOutcome): void {
    this.jobs.inc({ kind, outcome });
  }

  /** Counts one webhook delivery attempt. */
  webhookDelivery(outcome: 'succeeded' | 'failed'): void {
    this.webhooks.inc({ outcome });
  }

  /** The exposition text and its content type (Prometheus text format 0.0.4). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
