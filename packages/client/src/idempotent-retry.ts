/**
 * Retries of a request that must not take effect twice, after the IETF httpapi Idempotency-Key draft:
 * one key for the logical request, sent again on every attempt, so the service can answer a retry
 * whose first answer was lost with that same answer (the service's `auth/refresh`).
 */

/** How {@link withIdempotencyKey} retries. */
export interface IdempotentRetryOptions {
  /** The key to send; default 128 random bits in hex (one per logical request). */
  idempotencyKey?: string;
  /** Attempts in all, at least 1; default 3. */
  attempts?: number;
  /** Longest wait between attempts in milliseconds, whatever `Retry-After` says; default 5000. */
  maxDelayMs?: number;
}

/** Statuses after which the same request may be sent again: the service or a proxy was unavailable. */
const RETRYABLE_STATUSES = new Set([502, 503, 504]);

/**
 * Sends a request with an `Idempotency-Key` and retries it with the same key when the answer was lost
 * (the request threw, e.g. a network error) or the service was unavailable (502, 503, 504), waiting
 * `Retry-After` seconds (capped by `maxDelayMs`, 500 ms when absent) between attempts.
 * @param send performs one attempt with the given key and resolves to something with the HTTP `response`.
 * @returns the result of the first attempt that got a non-retryable answer, or of the last attempt.
 * @throws what the last attempt threw, when every attempt threw.
 */
export async function withIdempotencyKey<R extends { response: Response }>(
  send: (idempotencyKey: string) => Promise<R>,
  options: IdempotentRetryOptions = {},
): Promise<R> {
  // getRandomValues, unlike randomUUID, also exists on pages not served over HTTPS.
  const key = options.idempotencyKey ?? Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const attempts = Math.max(1, options.attempts ?? 3);
  const maxDelayMs = options.maxDelayMs ?? 5000;
  for (let attempt = 1; ; attempt += 1) {
    let waitMs = 500;
    try {
      const result = await send(key);
      if (!RETRYABLE_STATUSES.has(result.response.status) || attempt >= attempts) return result;
      const retryAfter = Number(result.response.headers.get('retry-after'));
      if (Number.isFinite(retryAfter) && retryAfter > 0) waitMs = retryAfter * 1000;
    } catch (err) {
      if (attempt >= attempts) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, maxDelayMs)));
  }
}
