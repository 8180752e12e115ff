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
 * feature's errors module (`src/errors/<feature>.ts`), whose error catalog
 * ({@link defineErrorCatalog}) declares each error once and whose reasons are derived from it:
 *
 * ```ts
 * export const INVITE_ERRORS = defineErrorCatalog({
 *   invalid: { code: 'UNAUTHORIZED', reason: 'invite_invalid', message: 'The invitation is not valid' }, …
 * });
 * export const INVITE_REASONS = reasonsOf(INVITE_ERRORS);
 * declare module '../lib/errors.js' { interface ErrorReasonCatalogs { invites: typeof INVITE_REASONS } }
 * ```
 *
 * `ErrorReason` is the union of every catalog's values, and `ApiError`'s details and every router's
 * `errorReasons` accept only an `ErrorReason`: a reason is declared in its catalog, and a typo or a
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

/**
 * One entry of an error catalog: the error's code (its HTTP status, `ERROR_STATUS`), its
 * `details.reason`, its message, and the further `details` fields it carries. `message` is a string,
 * or a function of the typed arguments the throw site passes where the text interpolates a value;
 * `details` likewise maps those arguments to the extra fields (e.g. `{ minLength }`).
 */
export interface ErrorCatalogEntry<Reason extends string = string> {
  readonly code: TrpcCode;
  readonly reason: Reason;
  readonly message: string | ((args: never) => string);
  readonly details?: (args: never) => Record<string, unknown>;
}

/** The argument an entry's factory takes: what its `message` and `details` functions need, or nothing. */
type EntryArgs<E> =
  (E extends { message: (args: infer M) => string } ? M : unknown) & (E extends { details: (args: infer D) => unknown } ? D : unknown);

/**
 * The error factory of one catalog entry: call it to get the ApiError to throw. It carries the
 * entry's `reason` and `code`, so routers and tests name a reason through the catalog.
 */
export type ErrorFactory<E extends ErrorCatalogEntry> = (unknown extends EntryArgs<E> ? () => ApiError : (args: EntryArgs<E>) => ApiError) & {
  readonly reason: E['reason'];
  readonly code: E['code'];
};

/** A feature's catalog: one factory per entry, under the entry's name. */
export type ErrorCatalog<Entries extends Record<string, ErrorCatalogEntry>> = { readonly [Name in keyof Entries]: ErrorFactory<Entries[Name]> };

/** The `reason` of each entry of a catalog, by entry name (the shape merged into ErrorReasonCatalogs). */
export type ReasonsOf<Catalog extends Record<string, { readonly reason: string }>> = { readonly [Name in keyof Catalog]: Catalog[Name]['reason'] };

/**
 * Builds a feature's error catalog (docs/architecture.md "Errors"): each entry declares once its
 * code, `details.reason` and message, and becomes a factory, so a throw site reads
 * `throw SESSION_ERRORS.sessionRevoked()` or `throw USER_ERRORS.passwordTooShort({ minLength })`.
 * The feature merges `ReasonsOf<typeof ITS_ERRORS>` into ErrorReasonCatalogs so `ErrorReason`
 * (and every router's `errorReasons`) knows its reasons.
 */
export function defineErrorCatalog<const Entries extends Record<string, ErrorCatalogEntry>>(entries: Entries): ErrorCatalog<Entries> {
  const catalog: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const build = (args?: unknown): ApiError => {
      const message = typeof entry.message === 'string' ? entry.message : (entry.message as (a: unknown) => string)(args);
      const extra = entry.details ? (entry.details as (a: unknown) => Record<string, unknown>)(args) : {};
      return new ApiError(entry.code, message, { reason: entry.reason as ErrorReason, ...extra });
    };
    catalog[name] = Object.assign(build, { reason: entry.reason, code: entry.code });
  }
  return catalog as ErrorCatalog<Entries>;
}

/** The `reason` of each entry of a catalog built by defineErrorCatalog, by entry name. */
export function reasonsOf<Catalog extends Record<string, { readonly reason: string }>>(catalog: Catalog): ReasonsOf<Catalog> {
  return Object.fromEntries(Object.entries(catalog).map(([name, factory]) => [name, factory.reason])) as ReasonsOf<Catalog>;
}

/**
 * The errors of REQUEST_REASONS a route throws itself (the others are written by the HTTP layer,
 * src/rest/http-hardening.ts and src/rest/error-envelope.ts).
 */
export const REQUEST_ERRORS = defineErrorCatalog({
  /** 400: an input refused by a check the schema cannot express (`details.issues`). */
  validationFailed: {
    code: 'BAD_REQUEST', reason: REQUEST_REASONS.validationFailed, message: 'Request validation failed',
    details: ({ issues }: { issues: readonly { path: string; message: string }[] }) => ({ issues }),
  },
  /** 400: a body in another media type than the route takes. */
  ndjsonRequired: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.unsupportedMediaType, message: 'The body must be NDJSON (Content-Type: application/x-ndjson), on the REST API' },
  /** 404: a route served on the REST API only, called over tRPC. */
  restOnly: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: ({ resource }: { resource: string }) => `The ${resource} is served on the REST API only` },
  /** 429, with `Retry-After` set by the caller. */
  rateLimited: {
    code: 'TOO_MANY_REQUESTS', reason: REQUEST_REASONS.rateLimited, message: 'Too many requests, retry later',
    details: ({ retryAfterSeconds }: { retryAfterSeconds: number }) => ({ retryAfterSeconds }),
  },
  /** 503: a dependency is down (src/lib/outage.ts). */
  serviceUnavailable: { code: 'SERVICE_UNAVAILABLE', reason: REQUEST_REASONS.serviceUnavailable, message: 'A dependency of the service is unavailable; retry later' },
  /** 400: a body in another media type than JSON (src/rest/app.ts). */
  jsonRequired: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.unsupportedMediaType, message: 'The request body must be JSON (Content-Type: application/json)' },
  /** 400: a body that does not parse as JSON. */
  malformedJson: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.malformedJson, message: 'The request body is not valid JSON' },
  /** 413: a body over the route's limit (`details.limitBytes`). */
  bodyTooLarge: {
    code: 'PAYLOAD_TOO_LARGE', reason: REQUEST_REASONS.bodyTooLarge, message: 'The request body is too large',
    details: ({ limitBytes }: { limitBytes: number }) => ({ limitBytes }),
  },
  /** 400: a body that could not be read (encoding, charset, cut short). */
  unreadableBody: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.unreadableBody, message: 'The request body could not be read' },
  /** 403: a CORS preflight from an origin not in `CORS_ORIGINS` (src/rest/http-hardening.ts). */
  originNotAllowed: { code: 'FORBIDDEN', reason: REQUEST_REASONS.originNotAllowed, message: 'This origin may not call the API from a browser' },
  /** 400: a path that is not validly percent-encoded. */
  malformedPath: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.malformedPath, message: 'The request path is not validly percent-encoded' },
  /** 400: a query string that is not validly percent-encoded. */
  malformedQuery: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.malformedQuery, message: 'The query string is not validly percent-encoded' },
  /** 400: a JSON body that is not an object. */
  bodyNotObject: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.bodyNotObject, message: 'The request body must be a JSON object' },
  /** 400: a NUL character or a lone surrogate in the path, query or body. */
  invalidCharacters: { code: 'BAD_REQUEST', reason: REQUEST_REASONS.invalidCharacters, message: 'The request holds a NUL character or an invalid Unicode sequence' },
  /** 400: a JSON body nested deeper than the limit (`details.maxDepth`). */
  bodyTooDeep: {
    code: 'BAD_REQUEST', reason: REQUEST_REASONS.bodyTooDeep, message: ({ maxDepth }: { maxDepth: number }) => `The request body nests deeper than ${maxDepth} levels`,
    details: ({ maxDepth }: { maxDepth: number }) => ({ maxDepth }),
  },
  /** 500: anything unexpected; the cause is logged, never answered. */
  internal: { code: 'INTERNAL_SERVER_ERROR', reason: REQUEST_REASONS.internalError, message: 'Internal server error' },
});

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
