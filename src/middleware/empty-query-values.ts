import type { Request } from 'express';
import { REQUEST_ERRORS } from '../lib/errors.js';

/**
 * The REST adapter drops query parameters whose value is empty (`?search=`), so a procedure would
 * read them as absent and answer as if no filter was asked for. This reads the raw query string
 * (RFC 3986 §3.4, `application/x-www-form-urlencoded` rules) for the named parameters.
 * @returns the names among `names` present in the query with an empty value.
 */
export function emptyQueryValues(req: Pick<Request, 'originalUrl'>, names: readonly string[]): string[] {
  const at = req.originalUrl.indexOf('?');
  if (at < 0) return [];
  const params = new URLSearchParams(req.originalUrl.slice(at + 1));
  return names.filter((name) => params.getAll(name).some((value) => value === ''));
}

/**
 * Refuses named query parameters sent empty, as the schema would have (their minimum length is 1).
 * @throws ApiError 400 `validation_failed` with `details.issues` `[{path, message}]`.
 */
export function rejectEmptyQueryValues(req: Pick<Request, 'originalUrl'>, names: readonly string[]): void {
  const empty = emptyQueryValues(req, names);
  if (empty.length === 0) return;
  throw REQUEST_ERRORS.validationFailed({ issues: empty.map((path) => ({ path, message: 'must not be empty (1 or more characters)' })) });
}
