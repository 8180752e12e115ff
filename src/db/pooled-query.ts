import type { EntityManager } from '@mikro-orm/postgresql';
import type { PoolClient, QueryResultRow } from 'pg';

/** The part of knex's client this module uses: its connection pool (tarn) of `pg` clients. */
interface KnexConnectionPool {
  acquireConnection(): Promise<PoolClient>;
  releaseConnection(connection: PoolClient): Promise<unknown>;
}

/**
 * Runs one parameterised statement (`$1…$n` placeholders, PostgreSQL's own syntax) on a connection
 * of the ORM's pool, skipping knex's query runner and MikroORM's logging wrapper: the statement goes
 * to `pg` as written, with the same connection settings and type parsers as every other query. For a
 * read on a hot path (docs/performance.md): the one query of every authenticated request, the
 * permissions of every token grant for an API resource; outside any transaction. Everything else
 * uses the entity manager.
 * @returns the rows as `pg` parsed them.
 * @throws the driver's error (a dropped connection is discarded by the pool's validation on release).
 */
export async function queryPooled<R extends QueryResultRow>(em: EntityManager, text: string, values: readonly unknown[]): Promise<R[]> {
  const pool = em.getConnection().getKnex().client as unknown as KnexConnectionPool;
  const connection = await pool.acquireConnection();
  try {
    return (await connection.query<R>(text, values as unknown[])).rows;
  } finally {
    await pool.releaseConnection(connection);
  }
}
