import type { Socket } from 'node:net';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ERROR_STATUS, REQUEST_ERRORS, type ErrorEnvelope } from '../lib/errors.js';
import { sendApiError } from './error-envelope.js';

/** Methods a cross-origin browser client may use (the REST façade's). */
const CORS_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Request headers a cross-origin client may send. */
const CORS_REQUEST_HEADERS = ['Authorization', 'Content-Type'];
/** How long a browser may cache a preflight answer, in seconds. */
const CORS_MAX_AGE_SECONDS = 600;

/**
 * Strict CORS (OWASP ASVS V3.4, Fetch standard): only origins listed in `CORS_ORIGINS` get
 * `Access-Control-Allow-Origin` (their own origin echoed, with `Vary: Origin`), never `*`, and never
 * `Access-Control-Allow-Credentials` (the API authenticates with bearer tokens, not cookies).
 * A preflight from any other origin is refused with 403 `origin_not_allowed` in the error envelope;
 * a simple request from it is served without CORS headers, so the browser withholds the answer.
 * @param allowedOrigins exact origins (`scheme://host[:port]`), validated by the configuration.
 */
export function strictCors(allowedOrigins: readonly string[]): RequestHandler[] {
  const allowed = new Set(allowedOrigins);
  const refusePreflight: RequestHandler = (req, res, next) => {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (preflight && !allowed.has(origin)) {
      return sendApiError(res, REQUEST_ERRORS.originNotAllowed());
    }
    next();
  };
  const answer = cors({
    origin: [...allowed],
    methods: CORS_METHODS,
    allowedHeaders: CORS_REQUEST_HEADERS,
    credentials: false,
    maxAge: CORS_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
  });
  return [refusePreflight, answer];
}

/**
 * CORS for the public OpenAPI document only: any origin may read it (`Access-Control-Allow-Origin: *`,
 * GET only, no credentials), so documentation tools served from elsewhere can load it. It holds no
 * secret; every other route keeps `strictCors`.
 */
export const publicDescriptionCors: RequestHandler = cors({
  origin: '*',
  methods: ['GET'],
  credentials: false,
  maxAge: CORS_MAX_AGE_SECONDS,
  optionsSuccessStatus: 204,
});

/** A UTF-16 surrogate without its partner. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when a string can be stored and compared faithfully: no U+0000 (PostgreSQL text cannot hold it)
 * and no lone UTF-16 surrogate (it has no UTF-8 encoding and would be silently replaced).
 */
export function isSafeText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/** Deepest nesting of arrays and objects accepted in a JSON body (this API's inputs need 3). */
export const MAX_JSON_DEPTH = 32;

/** Largest accepted request body, in bytes. */
export const MAX_BODY_BYTES = 100 * 1024;

/** Largest body of POST users/import (1,000 users with their password hashes, docs/import.md), in bytes. */
export const USER_IMPORT_MAX_BODY_BYTES = 2 * 1024 * 1024;
/**
 * Largest body of creating or changing an SSO connection, in bytes: an identity provider's SAML
 * metadata may be up to 256 KiB (docs/sso.md), more than any other body.
 */
export const SSO_CONNECTION_MAX_BODY_BYTES = 320 * 1024;

/**
 * Walks a parsed JSON value iteratively (no recursion, so deep nesting cannot overflow the stack).
 * @returns why the value is refused, or undefined when it is acceptable.
 */
function inspectJson(root: unknown): 'invalid_characters' | 'body_too_deep' | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (!isSafeText(value)) return 'invalid_characters';
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_JSON_DEPTH) return 'body_too_deep';
      for (const [key, item] of Object.entries(value)) {
        if (!isSafeText(key)) return 'invalid_characters';
        stack.push({ value: item, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/**
 * Screens a request before any procedure sees it (OWASP ASVS V1 encoding, V2 validation):
 * - 400 `malformed_path` / `malformed_query`: broken percent-encoding;
 * - 400 `invalid_characters`: a NUL character or a lone surrogate in the path, query or JSON body;
 * - 400 `body_not_object`: a JSON body that is not an object (every body of this API is one);
 * - 400 `body_too_deep`: objects or arrays nested deeper than `MAX_JSON_DEPTH`.
 * Runs after body parsing.
 */
export function screenRequestInput(req: Request, res: Response, next: NextFunction): void {
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    return sendApiError(res, REQUEST_ERRORS.malformedPath());
  }
  const rawQuery = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
  let query: string;
  try {
    query = decodeURIComponent(rawQuery.replace(/\+/g, ' '));
  } catch {
    return sendApiError(res, REQUEST_ERRORS.malformedQuery());
  }
  const body: unknown = req.body;
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    return sendApiError(res, REQUEST_ERRORS.bodyNotObject());
  }
  const refusal = !isSafeText(path) || !isSafeText(query) ? 'invalid_characters' : inspectJson(body);
  if (refusal === 'invalid_characters') {
    return sendApiError(res, REQUEST_ERRORS.invalidCharacters());
  }
  if (refusal === 'body_too_deep') {
    return sendApiError(res, REQUEST_ERRORS.bodyTooDeep({ maxDepth: MAX_JSON_DEPTH }));
  }
  next();
}

/**
 * Answers an HTTP request the parser could not read (malformed request line or headers, headers over
 * Node's limit) with a 400 in the error envelope instead of Node's bare response, then closes the
 * connection. For `server.on('clientError')`.
 */
export function answerClientError(logger: Logger) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const body: ErrorEnvelope = {
      code: 'BAD_REQUEST',
      message: tooLarge ? 'The request headers are too large' : 'The request is not valid HTTP',
      details: { reason: tooLarge ? 'headers_too_large' : 'malformed_http' },
    };
    const payload = JSON.stringify(body);
    logger.debug({ code: err.code }, 'unreadable HTTP request refused');
    socket.end(
      `HTTP/1.1 ${ERROR_STATUS.BAD_REQUEST} Bad Request\r\n` +
        'Content-Type: application/json\r\n' +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n' +
        `Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
  };
}
