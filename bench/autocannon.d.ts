/** The part of autocannon 9's programmatic API the bench uses (the package ships no types). */
declare module 'autocannon' {
  export interface RequestContext {
    [key: string]: unknown;
  }
  export interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  export interface RequestSpec extends RawRequest {
    setupRequest?: (req: RawRequest, context: RequestContext) => RawRequest | null | undefined;
    onResponse?: (status: number, body: string, context: RequestContext, headers: Record<string, string>) => void;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    pipelining?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: RequestSpec[];
    initialContext?: RequestContext;
  }
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p999?: number;
    total: number;
  }
  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    '4xx': number;
    '5xx': number;
    latency: Histogram;
    requests: Histogram;
    statusCodeStats?: Record<string, { count: number }>;
  }
  export interface Instance extends PromiseLike<Result> {
    stop(): void;
    on(event: 'response', listener: (client: unknown, statusCode: number) => void): this;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
