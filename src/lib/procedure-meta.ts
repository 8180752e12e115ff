import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ErrorReason } from './errors.js';
import type { ProcedureRateLimits } from './rate-limit-budget.js';

/** The HTTP statuses an operation may document as errors (see `ERROR_STATUS` in src/lib/errors.ts). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503;

/**
 * The `details.reason` values one operation can answer, by HTTP status. The OpenAPI document lists
 * them as an enum per operation and status (docs/api-contract.md); adding a reason to a route is
 * one entry here. Reasons every route shares (body parsing, credentials, unknown tenant, rate limit)
 * are added by the generator in src/rest/openapi-errors.ts; those of a procedure kind (`admin_required`,
 * `live_key_required`, `user_token_required`) by the kind itself (`kindErrorReasons` below).
 */
export type ErrorReasons = Partial<Record<ErrorStatus, readonly ErrorReason[]>>;

/**
 * The meta of every procedure: trpc-to-openapi's `openapi` block (its `errorResponses` describe
 * each error status for this operation), the route's own `errorReasons`, and `kindErrorReasons`: the
 * reasons its procedure kind adds (src/middleware/pipeline.ts, e.g. `admin_required` of
 * `adminProcedure`), set once on the kind so routers do not list them. tRPC merges a kind's meta
 * with the route's shallowly, so the two keys stay apart and the OpenAPI generator joins them.
 * `rateLimit`: the per-IP and per-account budgets the procedure spends before it runs
 * (src/services/rate-limits/rate-limit-rules.ts; the pipeline's step 2, src/middleware/pipeline.ts),
 * declared beside the procedure so renaming it keeps its limit.
 */
export type ProcedureMeta = OpenApiMeta<{ errorReasons?: ErrorReasons; kindErrorReasons?: ErrorReasons; rateLimit?: ProcedureRateLimits }>;

