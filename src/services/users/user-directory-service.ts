import type { EntityManager } from '@mikro-orm/postgresql';
import { rowToEntity } from '../../db/rows.js';
import { UserSchema, type User, type UserRole, type UserStatus } from '../../entities/user.js';
import { badRequest } from '../../lib/errors.js';

/** Most users on one page of GET users. */
export const USERS_PAGE_MAX_LIMIT = 1000;
/** Page size when only `cursor` is given. */
export const USERS_PAGE_DEFAULT_LIMIT = 100;

/** Filters of GET users: an email substring (case-insensitive), a role, a status. */
export interface UserFilter {
  search?: string;
  role?: UserRole;
  status?: UserStatus;
}

/** `LIKE` pattern of a literal substring: `%`, `_` and the escape character itself escaped. */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The SQL condition and parameters of a filter (addresses are stored lower case). */
function filterSql(filter: UserFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (filter.search) {
    parts.push(`and email like ? escape '\\'`);
    params.push(containsPattern(filter.search));
  }
  if (filter.role) {
    parts.push('and role = ?');
    params.push(filter.role);
  }
  if (filter.status) {
    parts.push('and status = ?');
    params.push(filter.status);
  }
  return { sql: parts.join(' '), params };
}

/** One page of the user list, in the list's order. */
export interface UserPage {
  users: User[];
  /** Opaque; pass it as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/** The sort key of the last user of a page: `created_at` at microsecond precision (UTC text) and the id. */
const CURSOR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CURSOR_COLUMN = 'page_cursor_created_at';

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
  throw badRequest('invalid_cursor', 'The cursor is not one this list handed out');
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
    const where = filterSql(filter);
    const rows = await em.execute<Record<string, unknown>[]>(
      `select * from app_user where tenant_id = ? and deleted_at is null ${where.sql} order by created_at, id`,
      [tenantId, ...where.params],
    );
    return rows.map((row) => rowToEntity(em, UserSchema, row));
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
    const keyset = after ? `and (created_at, id) > (?::timestamp at time zone 'UTC', ?::uuid)` : '';
    const where = filterSql(filter);
    const rows = await em.execute<Record<string, unknown>[]>(
      `select *, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as ${CURSOR_COLUMN}
         from app_user
        where tenant_id = ? and deleted_at is null ${keyset} ${where.sql}
        order by created_at, id
        limit ?`,
      [tenantId, ...(after ? [after[0], after[1]] : []), ...where.params, limit + 1],
    );
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const users = page.map(({ [CURSOR_COLUMN]: _cursor, ...row }) => rowToEntity(em, UserSchema, row));
    return { users, nextCursor: hasMore && last ? encodeCursor(String(last[CURSOR_COLUMN]), users.at(-1)!.id) : null };
  }
}
