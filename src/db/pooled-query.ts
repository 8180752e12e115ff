import type { EntityManager } from '@mikro-orm/postgresql';
import type { PoolClient, QueryResultRow } from 'pg';

/** The part of knex's client this module uses: its connection pool (tarn) of `pg` clients. */
interface KnexConnectionPool {
  acquireConnection(): Promise<PoolClient>;
  releaseConnection(connection: PoolClient): Promise<unknown>;
}

/** A knex client or transaction: its `client` hands out the connection (a transaction's own one). */
interface KnexWithClient {
  client: KnexConnectionPool;
}

/**
 * Runs one parameterised statement (`$1…$n` placeholders, PostgreSQL's own syntax) on the entity
 * manager's connection, skipping knex's query runner and MikroORM's logging wrapper: the statement
 * goes to `pg` as written, with the same connection settings and type parsers as every other query.
 * Inside `em.transactional` it runs on the transaction's connection (knex's transaction client hands
 * out that one connection); otherwise on a connection of the ORM's pool. For the statements of a hot
 * path (docs/performance.md): the one query of every authenticated request, the refresh-token
 * rotation, the permissions of every token grant for an API resource. Everything else uses the
 * entity manager.
 * @returns the rows as `pg` parsed them.
 * @throws the driver's error (a dropped connection is discarded by the pool's validation on release).
 */
export async function queryPooled<R extends QueryResultRow>(em: EntityManager, text: string, values: readonly unknown[]): Promise<R[]> {
  return onPooledConnection(em, async (connection) => (await connection.query<R>(text, values as unknown[])).rows);
}

/** Runs `use` on the entity manager's connection: its transaction's, else one of the pool's, given back after. */
async function onPooledConnection<T>(em: EntityManager, use: (connection: PoolClient) => Promise<T>): Promise<T> {
  const runner = (em.getTransactionContext<KnexWithClient>() ?? em.getConnection().getKnex()) as unknown as KnexWithClient;
  const pool = runner.client;
  const connection = await pool.acquireConnection();
  try {
    return await use(connection);
  } finally {
    await pool.releaseConnection(connection);
  }
}

/**
 * As {@link queryPooled}, with each row as an array of its column values in the statement's order
 * (`pg`'s `rowMode: 'array'`): for a wide row that the caller splits by position, so no object keyed
 * by every column name is built first.
 * @returns the rows' values, typed as parsed by `pg`.
 * @throws the driver's error.
 */
export async function queryPooledArrays(em: EntityManager, text: string, values: readonly unknown[]): Promise<unknown[][]> {
  return onPooledConnection(em, async (connection) => (await connection.query<unknown[]>({ text, values: values as unknown[], rowMode: 'array' })).rows);
}

/** The part of a knex client or transaction this module uses: a raw statement with bound values. */
interface KnexRaw {
  raw(sql: string, bindings: readonly unknown[]): PromiseLike<{ rows: QueryResultRow[] }>;
}

/**
 * Runs one statement with its values sent as bind parameters (`?` placeholders, numbered by knex),
 * in the entity manager's transaction when it has one, else on a connection of the pool. Unlike
 * `em.execute`, which writes every value into the SQL text, a JavaScript array is one parameter
 * (PostgreSQL's array type, e.g. `unnest(?::uuid[])`): a statement of a thousand rows sends a few
 * arrays instead of a thousand literals for the database to parse (the bulk writes of an import,
 * docs/performance.md "Import jobs"). `?` must not appear in the SQL other than as a placeholder.
 * @returns the rows as `pg` parsed them (the same type parsers as every other query).
 * @throws the driver's error, not converted by MikroORM.
 */
export async function executeWithArrays<R extends QueryResultRow>(em: EntityManager, sql: string, values: readonly unknown[]): Promise<R[]> {
  const runner = (em.getTransactionContext<KnexRaw>() ?? em.getConnection().getKnex()) as unknown as KnexRaw;
  return (await runner.raw(sql, values)).rows as R[];
}
