import type { Socket } from 'node:net';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ERROR_STATUS, type ErrorEnvelope } from '../lib/errors.js';
import { sendError } from './error-envelope.js';

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
      return sendError(res, 'FORBIDDEN', 'This origin may not call the API from a browser', { reason: 'origin_not_allowed' });
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

/** A UTF-16 surrogate without its partner. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when a string can be stored and compared faithfully: no U+0000 (PostgreSQL text cannot hold it)
 * and no lone UTF-16 surrogate (it has no UTF-8 encoding and would be silently replaced).
 */
export function isSafeText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/** Walks a parsed JSON value iteratively (no recursion, so deep nesting cannot overflow the stack). */
function containsUnsafeText(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (!isSafeText(value)) return true;
    } else if (Array.isArray(value)) {
      stack.push(...value);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (!isSafeText(key)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

/**
 * Refuses, with 400 `invalid_characters`, a request whose path, query or JSON body holds a NUL
 * character or a lone surrogate (OWASP ASVS V1 input encoding), and with 400 `malformed_path` a path
 * whose percent-encoding is broken. Runs after body parsing, before any procedure.
 */
export function rejectUnsafeText(req: Request, res: Response, next: NextFunction): void {
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    return sendError(res, 'BAD_REQUEST', 'The request path is not validly percent-encoded', { reason: 'malformed_path' });
  }
  const rawQuery = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
  let query: string;
  try {
    query = decodeURIComponent(rawQuery.replace(/\+/g, ' '));
  } catch {
    return sendError(res, 'BAD_REQUEST', 'The query string is not validly percent-encoded', { reason: 'malformed_query' });
  }
  if (!isSafeText(path) || !isSafeText(query) || containsUnsafeText(req.body)) {
    return sendError(res, 'BAD_REQUEST', 'The request holds a NUL character or an invalid Unicode sequence', {
      reason: 'invalid_characters',
    });
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
