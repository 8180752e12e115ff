import type { EntityManager } from '@mikro-orm/postgresql';
import type { User } from '../../entities/user.js';
import { findLiveUsers, findLiveUsersAfter, type UserFilter } from '../../queries/user.js';
import { USER_ERRORS } from '../../errors/user.js';

/** Most users on one page of GET users. */
export const USERS_PAGE_MAX_LIMIT = 1000;
/** Page size when only `cursor` is given. */
export const USERS_PAGE_DEFAULT_LIMIT = 100;

export type { UserFilter } from '../../queries/user.js';

/** One page of the user list, in the list's order. */
export interface UserPage {
  users: User[];
  /** Opaque; pass it as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/** The sort key of the last user of a page: `created_at` at microsecond precision (UTC text) and the id. */
const CURSOR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

/** @throws ApiError 400 `invalid_cursor` for anything `encodeCursor` did not make. */
function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      const [createdAt, id] = value as [string, string];
      if (CURSOR_TIMESTAMP.test(createdAt) && UUID.test(id)) return [createdAt, id];
    }
  } catch {
    // falls through to the refusal
  }
  throw USER_ERRORS.invalidCursor();
}

/** The tenant's user list for administrators (GET users; docs/decisions.md "Request path and code layout"). */
export class UserDirectoryService {
  /**
   * The tenant's live (not soft-deleted) users matching `filter`, oldest first (ties by id). The
   * email search is a case-insensitive substring, served by a trigram index. Plain SQL mapped row by
   * row: the ORM's query building and hydration cost more than the query itself on a tenant of
   * 10,000 users.
   */
  async list(em: EntityManager, tenantId: string, filter: UserFilter = {}): Promise<User[]> {
    return findLiveUsers(em, tenantId, filter);
  }

  /**
   * One page of {@link list}: keyset pagination on (created_at, id), served by the
   * `(tenant_id, created_at)` index, so every page costs the same however deep it is. Users created
   * or deleted between two pages are seen or missed as a keyset allows, never repeated.
   * @param limit users per page, 1 to USERS_PAGE_MAX_LIMIT.
   * @param cursor the `nextCursor` of the previous page, or undefined for the first page.
   * @throws ApiError 400 `invalid_cursor`.
   */
  async listPage(em: EntityManager, tenantId: string, limit: number, cursor: string | undefined, filter: UserFilter = {}): Promise<UserPage> {
    const after = cursor ? decodeCursor(cursor) : undefined;
    const rows = await findLiveUsersAfter(em, tenantId, filter, after, limit + 1);
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { users: page.map((row) => row.user), nextCursor: hasMore && last ? encodeCursor(last.createdAtText, last.user.id) : null };
  }
}
