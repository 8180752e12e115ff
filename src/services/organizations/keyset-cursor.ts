import { isUuid } from '../../lib/uuid.js';
import { USER_ERRORS } from '../../errors/user.js';

/**
 * The opaque cursor of the organization lists (GET organizations, GET organizations/{id}/members;
 * docs/organizations.md): the keyset of the last item of a page, its `created_at` as UTC text at
 * microsecond precision and its id, as base64url JSON.
 */

const CURSOR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;

/** The cursor of the page after the item created at `createdAt` (UTC, `YYYY-MM-DDTHH:MM:SS.ffffff`) with id `id`. */
export function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

/**
 * The keyset `[createdAt, id]` of a cursor {@link encodeCursor} made.
 * @throws ApiError 400 `invalid_cursor` for anything else.
 */
export function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      const [createdAt, id] = value as [string, string];
      if (CURSOR_TIMESTAMP.test(createdAt) && isUuid(id)) return [createdAt, id];
    }
  } catch {
    // falls through to the refusal
  }
  throw USER_ERRORS.invalidCursor();
}
