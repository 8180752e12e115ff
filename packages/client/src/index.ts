/**
 * Typed clients of the Tenant Identity service, with no dependency on the server.
 *
 * - `AppRouter`: the type of the `/trpc` endpoint, for `createTRPCClient<AppRouter>` (@trpc/client 11).
 * - `createRestClient`: an openapi-fetch client of the REST API, typed from its OpenAPI document;
 *   `paths`, `components` and `operations` are that document's types.
 * - `ApiError` / `isApiError`: the error envelope every REST error answer has.
 * - `refreshSession` / `withIdempotencyKey`: a refresh (or any idempotent-keyed request) that survives
 *   a lost answer: one `Idempotency-Key` per logical refresh, the same on every retry.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './generated/rest-paths.js';
import { withIdempotencyKey, type IdempotentRetryOptions } from './idempotent-retry.js';

export { withIdempotencyKey, type IdempotentRetryOptions };

export type { AppErrorData, AppErrorShape, AppRouter, AppRouterRecord } from './generated/app-router.js';
export type { components, operations, paths };

/** A REST client of the service: `client.POST('/v1/{tenantSlug}/auth/login', { params, body })`. */
export type RestClient = Client<paths, 'application/json'>;

/**
 * Creates the REST client.
 * @param baseUrl the service origin, e.g. `https://id.example.org` (no trailing slash).
 * @param options other openapi-fetch options (headers, fetch, …).
 */
export function createRestClient(baseUrl: string, options: Omit<ClientOptions, 'baseUrl'> = {}): RestClient {
  return createClient<paths, 'application/json'>({ ...options, baseUrl });
}

/** The body of every error answer of the REST API. */
export type ApiError = components['schemas']['ErrorEnvelope'];

/** True when a value has the `{ code, message, details }` shape of an error answer. */
export function isApiError(value: unknown): value is ApiError {
  if (typeof value !== 'object' || value === null) return false;
  const { code, message, details } = value as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string' && typeof details === 'object' && details !== null;
}

/**
 * Exchanges a refresh token for a new pair (`POST /v1/{tenantSlug}/auth/refresh`) with one
 * `Idempotency-Key` for this logical refresh: when the answer is lost (network error) or the service
 * answers 502/503/504, the same request is sent again with the same key, and the service answers it
 * with the same pair instead of revoking the session as a replay.
 * @returns openapi-fetch's `{ data, error, response }` of the answering attempt.
 */
export function refreshSession(client: RestClient, tenantSlug: string, refreshToken: string, options: IdempotentRetryOptions = {}) {
  return withIdempotencyKey(
    (key) => client.POST('/v1/{tenantSlug}/auth/refresh', { params: { path: { tenantSlug }, header: { 'Idempotency-Key': key } }, body: { refreshToken } }),
    options,
  );
}
