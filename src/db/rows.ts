import type { EntitySchema } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Maps one row of a plain-SQL query (`select * from <table>`) to the entity's properties, as a
 * detached read-only value (like `findOne(…, { disableIdentityMap: true })`, without the ORM's query
 * building and per-call fork). Pass only the columns of the table: others would be copied as they are.
 */
export function rowToEntity<T extends object>(em: EntityManager, schema: EntitySchema<T>, row: Record<string, unknown>): T {
  const meta = em.getMetadata().get<T>(schema.meta.className);
  return em.getDriver().mapResult(row as never, meta) as T;
}
