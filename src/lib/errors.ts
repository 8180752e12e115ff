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

/**
 * The catalogs of `details.reason` values, one per feature, merged into this interface by each
 * feature's errors module (`src/services/<feature>/<feature>-errors.ts`, `src/rest/http-errors.ts`):
 *
 * ```ts
 * export const INVITE_REASONS = { invalid: 'invite_invalid', … } as const;
 * declare module '../../lib/errors.js' { interface ErrorReasonCatalogs { invites: typeof INVITE_REASONS } }
 * ```
 *
 * `ErrorReason` is the union of every catalog's values, and every error constructor below and every
 * router's `errorReasons` accept only an `ErrorReason`: a reason is declared once, and a typo or a
 * rename fails the typecheck (docs/architecture.md "Errors").
 */
export interface ErrorReasonCatalogs {
  request: typeof REQUEST_REASONS;
}

/** The reasons any route can give, before or around its procedure (docs/api-rules.md "Errors"). */
export const REQUEST_REASONS = {
  /** The input broke its schema (`details.issues`). */
  validationFailed: 'validation_failed',
  /** The body is not JSON. */
  malformedJson: 'malformed_json',
  /** A body that is not `application/json`. */
  unsupportedMediaType: 'unsupported_media_type',
  /** The body could not be read (bad encoding, cut short). */
  unreadableBody: 'unreadable_body',
  /** A JSON body that is not an object. */
  bodyNotObject: 'body_not_object',
  /** A JSON body nested deeper than the limit (`details.maxDepth`). */
  bodyTooDeep: 'body_too_deep',
  /** A NUL character or an invalid Unicode sequence. */
  invalidCharacters: 'invalid_characters',
  /** The query string is not validly percent-encoded. */
  malformedQuery: 'malformed_query',
  /** The path is not validly percent-encoded. */
  malformedPath: 'malformed_path',
  /** The HTTP request itself could not be parsed. */
  malformedHttp: 'malformed_http',
  /** The request's headers are larger than the server accepts. */
  headersTooLarge: 'headers_too_large',
  /** The body is over the size limit (`details.limitBytes`). */
  bodyTooLarge: 'body_too_large',
  /** A browser origin not in `CORS_ORIGINS`. */
  originNotAllowed: 'origin_not_allowed',
  /** A rate limit is spent (`details.retryAfterSeconds`). */
  rateLimited: 'rate_limited',
  /** No such route or resource. */
  notFound: 'not_found',
  /** An unexpected failure (logged, never detailed). */
  internalError: 'internal_error',
  /** A dependency (the database, or Redis where required) is down or restarting. */
  serviceUnavailable: 'service_unavailable',
} as const;

/** Every `details.reason` the service can answer: the values of all catalogs of ErrorReasonCatalogs. */
export type ErrorReason = { [F in keyof ErrorReasonCatalogs]: ErrorReasonCatalogs[F][keyof ErrorReasonCatalogs[F]] }[keyof ErrorReasonCatalogs];

/** The `details` of an error: its catalog `reason` (where one applies) and any further fields. */
export type ErrorDetails = { reason?: ErrorReason } & Record<string, unknown>;

type TrpcCode =
  | 'BAD_REQUEST' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'TOO_MANY_REQUESTS' | 'PAYLOAD_TOO_LARGE'
  | 'INTERNAL_SERVER_ERROR' | 'SERVICE_UNAVAILABLE';

/**
 * A failure the service means to report: carries the envelope's `details` (with `reason` where one
 * applies). Thrown from services; the tRPC error formatter and the REST façade render it.
 */
export class ApiError extends TRPCError {
  readonly details: ErrorDetails;

  constructor(code: TrpcCode, message: string, details: ErrorDetails = {}) {
    super({ code, message });
    this.details = details;
  }
}

/** 400 `BAD_REQUEST` for a broken business rule. */
export const badRequest = (reason: ErrorReason, message: string, extra: Record<string, unknown> = {}): ApiError =>
  new ApiError('BAD_REQUEST', message, { reason, ...extra });

/** 401 `UNAUTHORIZED`; `reason` is a stable `details.reason` value (docs/api-rules.md "Errors"). */
export const unauthorized = (reason: ErrorReason, message: string, extra: Record<string, unknown> = {}): ApiError =>
  new ApiError('UNAUTHORIZED', message, { reason, ...extra });

/** 403 `FORBIDDEN`: authenticated but not allowed. */
export const forbidden = (reason: ErrorReason, message: string): ApiError => new ApiError('FORBIDDEN', message, { reason });

/** 404 `NOT_FOUND`. */
export const notFound = (message: string, reason: ErrorReason = REQUEST_REASONS.notFound): ApiError => new ApiError('NOT_FOUND', message, { reason });

/** 409 `CONFLICT`: a uniqueness or state conflict. */
export const conflict = (reason: ErrorReason, message: string): ApiError => new ApiError('CONFLICT', message, { reason });

/** 429 `TOO_MANY_REQUESTS`; the caller also sets the `Retry-After` header. */
export const tooManyRequests = (retryAfterSeconds: number): ApiError =>
  new ApiError('TOO_MANY_REQUESTS', 'Too many requests, retry later', { reason: REQUEST_REASONS.rateLimited, retryAfterSeconds });

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
