import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { TRPCError } from '@trpc/server';

/** The error codes of docs/api-rules.md "Errors" with their HTTP statuses. */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The body of every error response: `{ code, message, details }` (docs/api-rules.md "Errors"). */
export interface ErrorEnvelope {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

type TrpcCode =
  | 'BAD_REQUEST' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'TOO_MANY_REQUESTS' | 'PAYLOAD_TOO_LARGE'
  | 'INTERNAL_SERVER_ERROR' | 'SERVICE_UNAVAILABLE';

/**
 * A failure the service means to report: carries the envelope's `details` (with `reason` where one
 * applies). Thrown from services; the tRPC error formatter and the REST façade render it.
 */
export class ApiError extends TRPCError {
  readonly details: Record<string, unknown>;

  constructor(code: TrpcCode, message: string, details: Record<string, unknown> = {}) {
    super({ code, message });
    this.details = details;
  }
}

/** 400 `BAD_REQUEST` for a broken business rule. */
export const badRequest = (reason: string, message: string, extra: Record<string, unknown> = {}): ApiError =>
  new ApiError('BAD_REQUEST', message, { reason, ...extra });

/** 401 `UNAUTHORIZED`; `reason` is a stable `details.reason` value (docs/api-rules.md "Errors"). */
export const unauthorized = (reason: string, message: string, extra: Record<string, unknown> = {}): ApiError =>
  new ApiError('UNAUTHORIZED', message, { reason, ...extra });

/** 403 `FORBIDDEN`: authenticated but not allowed. */
export const forbidden = (reason: string, message: string): ApiError => new ApiError('FORBIDDEN', message, { reason });

/** 404 `NOT_FOUND`. */
export const notFound = (message: string, reason = 'not_found'): ApiError => new ApiError('NOT_FOUND', message, { reason });

/** 409 `CONFLICT`: a uniqueness or state conflict. */
export const conflict = (reason: string, message: string): ApiError => new ApiError('CONFLICT', message, { reason });

/** 429 `TOO_MANY_REQUESTS`; the caller also sets the `Retry-After` header. */
export const tooManyRequests = (retryAfterSeconds: number): ApiError =>
  new ApiError('TOO_MANY_REQUESTS', 'Too many requests, retry later', { reason: 'rate_limited', retryAfterSeconds });

/** The standard text of each code, used where no more specific message is safe to show. */
export const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  BAD_REQUEST: 'Bad request',
  UNAUTHORIZED: 'Unauthorized',
  FORBIDDEN: 'Forbidden',
  NOT_FOUND: 'Not found',
  CONFLICT: 'Conflict',
  PAYLOAD_TOO_LARGE: 'Request body too large',
  TOO_MANY_REQUESTS: 'Too many requests',
  INTERNAL_SERVER_ERROR: 'Internal server error',
  SERVICE_UNAVAILABLE: 'Service unavailable',
};

/** True when a PostgreSQL error is a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof UniqueConstraintViolationException) return true;
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}
