import type { NextFunction, Request, Response } from 'express';
import { DEFAULT_MESSAGES, ERROR_STATUS, REQUEST_REASONS, type ApiError, type ErrorCode, type ErrorEnvelope } from '../lib/errors.js';
import { noteError } from './request-log.js';

/** Writes the error envelope of docs/api-rules.md "Errors" with its status. */
export function sendError(res: Response, code: ErrorCode, message: string, details: Record<string, unknown> = {}): void {
  const body: ErrorEnvelope = { code, message, details };
  noteError(res, code, details);
  res.status(ERROR_STATUS[code]).type('application/json').send(JSON.stringify(body));
}

/** Writes a catalog's ApiError (src/lib/errors.ts `defineErrorCatalog`) as the envelope, for routes outside the procedures. */
export function sendApiError(res: Response, error: ApiError): void {
  sendError(res, error.code as ErrorCode, error.message, error.details);
}

const KNOWN_CODES = new Set(Object.keys(ERROR_STATUS));

/** `details.reason` of every 500: the cause is logged, never answered. */
export const INTERNAL_ERROR_REASON = REQUEST_REASONS.internalError;

/** Turns the REST adapter's error body (`{message, code, data, issues}`) into the envelope. */
function toEnvelope(status: number, raw: string): { status: number; body: ErrorEnvelope } {
  let parsed: { code?: unknown; message?: unknown; data?: { details?: unknown } } = {};
  try {
    parsed = JSON.parse(raw) as typeof parsed;
  } catch {
    // not JSON: fall through to a generic envelope for the status
  }
  let code: ErrorCode = typeof parsed.code === 'string' && KNOWN_CODES.has(parsed.code) ? (parsed.code as ErrorCode) : 'INTERNAL_SERVER_ERROR';
  let message = typeof parsed.message === 'string' ? parsed.message : DEFAULT_MESSAGES[code];
  let details = parsed.data?.details && typeof parsed.data.details === 'object' ? (parsed.data.details as Record<string, unknown>) : {};
  if (parsed.code === 'UNSUPPORTED_MEDIA_TYPE' || parsed.code === 'PARSE_ERROR') {
    code = 'BAD_REQUEST';
    details = { reason: parsed.code === 'PARSE_ERROR' ? 'malformed_json' : 'unsupported_media_type' };
  } else if (parsed.code === 'METHOD_NOT_SUPPORTED') {
    code = 'NOT_FOUND';
    message = DEFAULT_MESSAGES.NOT_FOUND;
  } else if (code === 'INTERNAL_SERVER_ERROR' && status < 500) {
    code = (Object.entries(ERROR_STATUS).find(([, s]) => s === status)?.[0] as ErrorCode | undefined) ?? 'BAD_REQUEST';
  }
  if (code === 'INTERNAL_SERVER_ERROR') {
    message = DEFAULT_MESSAGES.INTERNAL_SERVER_ERROR;
    details = { reason: INTERNAL_ERROR_REASON };
  }
  // An unknown path, or an unknown method on a known one, is the adapter's reasonless NOT_FOUND.
  if (code === 'NOT_FOUND' && typeof details.reason !== 'string') details = { ...details, reason: REQUEST_REASONS.notFound };
  return { status: ERROR_STATUS[code], body: { code, message, details } };
}

/**
 * Express middleware for the REST façade: every error the tRPC-to-OpenAPI adapter writes leaves as
 * exactly `{ code, message, details }`, with the status of docs/api-rules.md "Errors". Every JSON answer
 * of the adapter also names its charset (`application/json; charset=utf-8`, OWASP ASVS 4.1.1).
 */
export function envelopeAdapterErrors(_req: Request, res: Response, next: NextFunction): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const [chunk] = args;
    if (!res.headersSent && res.getHeader('content-type') === 'application/json') res.setHeader('Content-Type', 'application/json; charset=utf-8');
    if (res.statusCode >= 400 && typeof chunk === 'string') {
      const { status, body } = toEnvelope(res.statusCode, chunk);
      noteError(res, body.code, body.details);
      res.statusCode = status;
      args[0] = JSON.stringify(body);
    }
    return end(...args);
  }) as Response['end'];
  next();
}
