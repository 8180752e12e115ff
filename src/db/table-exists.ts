import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * True when a table of this name is visible on the connection's search path. Lets the data
 * protection code cover tables that other features create (IdP links, invites) without depending
 * on those features being installed.
 */
export async function tableExists(em: EntityManager, table: string): Promise<boolean> {
  const rows = (await em.execute('select to_regclass(?) is not null as present', [table])) as { present: boolean }[];
  return rows[0]?.present === true;
}
