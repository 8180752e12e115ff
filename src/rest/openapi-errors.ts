import type { ResponseObject, SchemaObject } from 'openapi3-ts/oas31';
import { ERROR_STATUS, type ErrorCode, type ErrorReason } from '../lib/errors.js';
import type { ErrorReasons, ErrorStatus } from '../lib/procedure-meta.js';
import { MAX_BODY_BYTES } from './http-hardening.js';
import { INTERNAL_ERROR_REASON } from './error-envelope.js';
import { SERVICE_UNAVAILABLE_REASON } from '../lib/outage.js';

/**
 * The error half of the OpenAPI document: one response per operation and status, each with the
 * `{ code, message, details }` envelope the service really writes (src/rest/error-envelope.ts) and
 * the `details.reason` values that operation can give as an enum (docs/api-contract.md).
 */

/** `details.reason` of a request refused before any procedure runs (body, query or path unreadable, or invalid input). */
export const REQUEST_REASONS: readonly ErrorReason[] = [
  'validation_failed',
  'malformed_json',
  'unsupported_media_type',
  'unreadable_body',
  'body_not_object',
  'body_too_deep',
  'invalid_characters',
  'malformed_query',
  'malformed_path',
];

/** `details.reason` of a missing or refused bearer credential (access token or API key). */
export const CREDENTIAL_REASONS: readonly ErrorReason[] = [
  'missing_credential',
  'invalid_token',
  'token_expired',
  'tenant_mismatch',
  'session_revoked',
  'user_suspended',
  'email_not_verified',
  'api_key_revoked',
  'api_key_expired',
];

/** The optional fields of `details` beside `reason`, by status (every other field is refused). */
const DETAIL_FIELDS: Partial<Record<ErrorStatus, Record<string, SchemaObject>>> = {
  400: {
    issues: {
      type: 'array',
      description: 'One entry per invalid input field (reason `validation_failed`)',
      items: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Dotted path of the field, empty for the whole input' }, message: { type: 'string' } },
        required: ['path', 'message'],
        additionalProperties: false,
      },
    },
    maxDepth: { type: 'integer', minimum: 1, description: 'Deepest JSON nesting accepted (reason `body_too_deep`)' },
    minLength: { type: 'integer', minimum: 12, description: 'The workspace\'s shortest accepted password (reason `password_too_short`)' },
  },
  401: {
    methods: {
      type: 'array',
      items: { type: 'string', enum: ['totp', 'email'] },
      description: 'The second factors the user may present (reason `mfa_required`): `totp` is a `totpCode` or one of the user\'s `recoveryCode`s, `email` an `emailOtpCode`',
    },
    error: { type: 'string', description: 'OAuth 2.0 error code from the identity provider (RFC 6749 section 5.2)' },
    errorDescription: { type: 'string', description: 'The identity provider’s error_description, when it gave one' },
    check: { type: 'string', description: 'Which ID token check failed (reason `id_token_invalid`)' },
    mfaToken: {
      type: 'string',
      description: 'Single-use token to finish a provider sign-in with auth/mfa/complete (reason `mfa_required` on oauth/idp/callback)',
    },
    expiresInSeconds: { type: 'integer', minimum: 1, description: 'Seconds the `mfaToken` stays valid' },
    maxAgeSeconds: {
      type: 'integer',
      minimum: 1,
      description: 'How recent a sign-in must be, in seconds (reason `reauthentication_required`)',
    },
  },
  413: { limitBytes: { type: 'integer', minimum: 1, description: 'Largest accepted body, in bytes' } },
  429: { retryAfterSeconds: { type: 'integer', minimum: 0, description: 'Seconds until a retry can succeed (also in `Retry-After`)' } },
};

/** The description of a `reason` whose values the operation's meta does not list yet. */
export const UNLISTED_REASONS = 'Reasons not listed: add them to the procedure meta `errorReasons`';

/** The statuses of `ERROR_STATUS`, reversed: status → code. */
const CODE_OF_STATUS = new Map<number, ErrorCode>(Object.entries(ERROR_STATUS).map(([code, status]) => [status, code as ErrorCode]));

/** The schema of any error answer (used for routes outside the document, e.g. an unknown path). */
export const ERROR_ENVELOPE_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'The body of every error answer',
  properties: {
    code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string', description: 'Human-readable; never holds a secret' },
    details: {
      type: 'object',
      description: 'Machine-readable context: `reason` where one applies, plus reason-specific fields',
      properties: { reason: { type: 'string' } },
    },
  },
  required: ['code', 'message', 'details'],
  additionalProperties: false,
};

function envelopeSchema(status: ErrorStatus, reasons: readonly string[]): SchemaObject {
  const code = CODE_OF_STATUS.get(status);
  if (!code) throw new Error(`No error code has the status ${status}`);
  // A status whose reasons are not listed yet refuses every reason, so the conformance check fails
  // on the first real answer (test/openapi-document.test.ts also lists such statuses).
  const reason: SchemaObject =
    reasons.length > 0 ? { type: 'string', enum: [...reasons] } : { not: {}, description: UNLISTED_REASONS };
  const details: SchemaObject = {
    type: 'object',
    properties: {
      reason,
      ...DETAIL_FIELDS[status],
    },
    required: ['reason'],
    additionalProperties: false,
  };
  return {
    type: 'object',
    properties: { code: { type: 'string', const: code }, message: { type: 'string' }, details },
    required: ['code', 'message', 'details'],
    additionalProperties: false,
  };
}

/** What the generator knows of one operation. */
export interface OperationFacts {
  /** tRPC procedure path, e.g. `auth.login`. */
  procedurePath: string;
  method: string;
  /** REST path template, e.g. `/v1/{tenantSlug}/auth/login`. */
  path: string;
  protect: boolean;
  hasInput: boolean;
  /** The operation's own description of each error status (`openapi.errorResponses`). */
  descriptions: Partial<Record<number, string>>;
  /** The reasons the operation's meta lists (`errorReasons`); each status must be described. */
  reasons: ErrorReasons;
  /** The reasons its procedure kind adds (`kindErrorReasons`, src/middleware/pipeline.ts), at statuses every such route answers. */
  kindReasons: ErrorReasons;
  /** Whether the procedure declares a per-IP or per-account budget (meta `rateLimit`). */
  rateLimited: boolean;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The error responses of one operation: the statuses its meta describes plus those every route of
 * its kind can answer (400 for input, 401 for credentials, 403 for a refused browser origin, 404 for
 * an unknown tenant, 413 for a body, 429 for a rate limit, 500, 503 for an outage), each with its reason enum:
 * the shared reasons, its procedure kind's (`kindReasons`) and its own (`reasons`).
 * @throws Error when the meta lists reasons for a status it does not describe, or no error code has the status.
 */
export function errorResponses(op: OperationFacts): Record<string, ResponseObject> {
  const withBody = BODY_METHODS.has(op.method);
  const rateLimited = op.protect || op.rateLimited;
  const implied: Partial<Record<ErrorStatus, { description: string; reasons: readonly ErrorReason[] }>> = {
    ...(op.hasInput || withBody ? { 400: { description: 'The request is malformed or its input is invalid', reasons: REQUEST_REASONS } } : {}),
    ...(op.protect ? { 401: { description: 'No valid access token or API key', reasons: CREDENTIAL_REASONS } } : {}),
    403: { description: 'A browser request from an origin not in `CORS_ORIGINS`', reasons: ['origin_not_allowed'] },
    ...(op.path.includes('{tenantSlug}') ? { 404: { description: 'No tenant has this slug', reasons: ['tenant_not_found'] } } : {}),
    ...(withBody ? { 413: { description: `The body is larger than ${MAX_BODY_BYTES} bytes`, reasons: ['body_too_large'] } } : {}),
    ...(rateLimited ? { 429: { description: 'A rate limit is spent; retry after `Retry-After` seconds', reasons: ['rate_limited'] } } : {}),
    500: { description: 'An unexpected failure (logged; no detail is answered)', reasons: [INTERNAL_ERROR_REASON] },
    503: {
      description: 'The database (or Redis where it is required) is down or restarting; retry after `Retry-After` seconds',
      reasons: [SERVICE_UNAVAILABLE_REASON],
    },
  };
  for (const status of Object.keys(op.reasons)) {
    if (op.descriptions[Number(status)] === undefined) {
      throw new Error(`${op.procedurePath}: errorReasons lists ${status} but openapi.errorResponses does not describe it`);
    }
  }
  const statuses = new Set<number>([...Object.keys(implied), ...Object.keys(op.descriptions), ...Object.keys(op.kindReasons)].map(Number));
  const responses: Record<string, ResponseObject> = {};
  for (const status of [...statuses].sort((a, b) => a - b) as ErrorStatus[]) {
    const own = op.descriptions[status];
    const common = implied[status];
    const reasons = [...new Set([...(common?.reasons ?? []), ...(op.kindReasons[status] ?? []), ...(op.reasons[status] ?? [])])].sort();
    const listed = reasons.length > 0 ? ` — \`details.reason\`: ${reasons.map((r) => `\`${r}\``).join(', ')}` : '';
    const description = (own ?? common?.description ?? 'Error') + listed;
    responses[String(status)] = {
      description,
      ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer', minimum: 0 } } } } : {}),
      content: { 'application/json': { schema: envelopeSchema(status, reasons) } },
    };
  }
  return responses;
}
