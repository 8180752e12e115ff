import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ErrorReason } from './errors.js';

/** The HTTP statuses an operation may document as errors (see `ERROR_STATUS` in src/lib/errors.ts). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503;

/**
 * The `details.reason` values one operation can answer, by HTTP status. The OpenAPI document lists
 * them as an enum per operation and status (docs/api-contract.md); adding a reason to a route is
 * one entry here. Reasons every route of a kind shares (body parsing, credentials, unknown tenant,
 * rate limit) are added by the generator in src/rest/openapi-errors.ts.
 */
export type ErrorReasons = Partial<Record<ErrorStatus, readonly ErrorReason[]>>;

/**
 * The meta of every procedure: trpc-to-openapi's `openapi` block (its `errorResponses` describe
 * each error status for this operation) plus `errorReasons`.
 */
export type ProcedureMeta = OpenApiMeta<{ errorReasons?: ErrorReasons }>;
