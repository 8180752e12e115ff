import autocannon, { type RequestSpec } from 'autocannon';

/** What one measured load run produced. */
export interface LoadResult {
  /** Successful (2xx) requests per second over the whole run. */
  requestsPerSecond: number;
  /** Latency percentiles of every request, in milliseconds. */
  p50Ms: number;
  p99Ms: number;
  /** Connection errors + timeouts + non-2xx answers. */
  errors: number;
  /** Requests answered 2xx. */
  ok: number;
  durationSeconds: number;
  /** Answers by HTTP status, to explain errors. */
  statusCounts: Record<string, number>;
}

/**
 * Runs autocannon against `url` with `connections` keep-alive connections (one request in flight
 * each) for `durationSeconds`, or for exactly `amount` requests when given (capped at three times
 * the duration).
 */
export async function runLoad(opts: {
  url: string;
  connections: number;
  durationSeconds: number;
  requests: RequestSpec[];
  amount?: number;
}): Promise<LoadResult> {
  const instance = autocannon({
    url: opts.url,
    connections: opts.connections,
    pipelining: 1,
    timeout: 30,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.durationSeconds }),
    requests: opts.requests,
  });
  const guard = opts.amount ? setTimeout(() => instance.stop(), opts.durationSeconds * 3000) : undefined;
  const result = await instance;
  clearTimeout(guard);
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    ok: result['2xx'],
    durationSeconds: result.duration,
    statusCounts,
  };
}
