/** One JSON exchange with the service under test. */
export interface JsonResponse {
  status: number;
  body: any;
}

/** A minimal JSON client for the bench's setup steps (the load itself goes through autocannon). */
export class JsonClient {
  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, body?: unknown, token?: string): Promise<JsonResponse> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed };
  }

  /** Like `request`, but throws unless the answer is 200. */
  async expectOk(method: string, path: string, body?: unknown, token?: string): Promise<any> {
    const res = await this.request(method, path, body, token);
    if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

/** Runs `task` over `items` with at most `concurrency` in flight; results keep the input order. */
export async function mapConcurrent<T, R>(items: T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}
