import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

/** What the error envelope of a response said, kept on `res.locals` for the request log. */
export interface LoggedError {
  code: string;
  reason?: unknown;
}

/** Remembers the envelope's code and `details.reason` of an error response for `logRequests`. */
export function noteError(res: Response, code: string, details: Record<string, unknown>): void {
  (res.locals as { error?: LoggedError }).error = { code, reason: details.reason };
}

/**
 * One log line per request when its response is finished (OWASP ASVS V16 security logging): method,
 * path without the query string (an IdP callback carries its authorization code there), status,
 * duration in milliseconds, client IP, and for errors the envelope's code and reason. Refused
 * credentials (401/403) are logged at `warn` so authentication failures stand out; no header or body
 * is ever logged.
 */
export function logRequests(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    // Read now: a response sent before its body was read (a refused streamed upload) may find the socket gone at `finish`.
    const ip = req.ip;
    res.on('finish', () => {
      const status = res.statusCode;
      if (status < 400 && !logger.isLevelEnabled('debug')) return;
      const entry = {
        method: req.method,
        path: req.path,
        status,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        ip,
        error: (res.locals as { error?: LoggedError }).error,
      };
      if (status === 401 || status === 403) logger.warn(entry, 'request refused');
      else if (status === 503) logger.warn(entry, 'request refused: a dependency is unavailable');
      else if (status >= 500) logger.error(entry, 'request failed');
      else logger.debug(entry, 'request');
    });
    next();
  };
}
