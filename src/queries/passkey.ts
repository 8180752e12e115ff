import type { EntityManager } from '@mikro-orm/postgresql';
import type { Passkey, PasskeyTransport } from '../entities/passkey.js';

/**
 * The queries of the `passkey` table (docs/architecture.md "Rules", data access). The sign-in look-up
 * of a credential's owner reads `app_user` through the passkey and lives here. Each function takes
 * the caller's entity manager (pass the transaction when it must run in one; the caller owns it);
 * every statement is scoped by tenant id. Rows come back as `Passkey` values.
 */

interface PasskeyColumns {
  id: string;
  tenant_id: string;
  user_id: string;
  credential_id: string;
  public_key: Buffer | Uint8Array;
  counter: string | number;
  transports: PasskeyTransport[] | string;
  backup_eligible: boolean;
  backed_up: boolean;
  aaguid: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** A `select *` row as a `Passkey` (the JSON column may come back as text, the key as any byte array). */
function toPasskey(row: PasskeyColumns): Passkey {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: Buffer.from(row.public_key),
    counter: String(row.counter),
    transports: typeof row.transports === 'string' ? (JSON.parse(row.transports) as PasskeyTransport[]) : row.transports,
    backupEligible: row.backup_eligible,
    backedUp: row.backed_up,
    aaguid: row.aaguid,
    name: row.name,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** The passkeys of a user of the tenant, oldest first. */
export async function findPasskeysOfUser(em: EntityManager, tenantId: string, userId: string): Promise<Passkey[]> {
  const rows = (await em.execute('select * from passkey where tenant_id = ? and user_id = ? order by created_at, id', [tenantId, userId])) as PasskeyColumns[];
  return rows.map(toPasskey);
}

/** The passkey of the tenant with this credential id (base64url), or undefined. */
export async function findPasskeyByCredentialId(em: EntityManager, tenantId: string, credentialId: string): Promise<Passkey | undefined> {
  const rows = (await em.execute('select * from passkey where tenant_id = ? and credential_id = ?', [tenantId, credentialId])) as PasskeyColumns[];
  return rows[0] ? toPasskey(rows[0]) : undefined;
}

/** How many passkeys a user of the tenant has. */
export async function countPasskeysOfUser(em: EntityManager, tenantId: string, userId: string): Promise<number> {
  const rows = (await em.execute('select count(*)::int as n from passkey where tenant_id = ? and user_id = ?', [tenantId, userId])) as { n: number }[];
  return Number(rows[0]?.n ?? 0);
}

/** The email of the live user holding the tenant's credential `credentialId` (joins `app_user`), or null. */
export async function findLiveOwnerEmailOfCredential(em: EntityManager, tenantId: string, credentialId: string): Promise<string | null> {
  const rows = (await em.execute(
    `select u.email from passkey p join app_user u on u.id = p.user_id and u.tenant_id = p.tenant_id
        where p.tenant_id = ? and p.credential_id = ? and u.deleted_at is null`,
    [tenantId, credentialId],
  )) as { email: string }[];
  return rows[0]?.email ?? null;
}

/** Inserts a new passkey (`last_used_at` null). Fails on the tenant's unique credential id. */
export async function insertPasskey(em: EntityManager, passkey: Omit<Passkey, 'lastUsedAt'>): Promise<void> {
  await em.execute(
    `insert into passkey (id, tenant_id, user_id, credential_id, public_key, counter, transports, backup_eligible, backed_up, aaguid, name, created_at, last_used_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null)`,
    [
      passkey.id, passkey.tenantId, passkey.userId, passkey.credentialId, passkey.publicKey, passkey.counter, JSON.stringify(passkey.transports),
      passkey.backupEligible, passkey.backedUp, passkey.aaguid, passkey.name, passkey.createdAt,
    ],
  );
}

/**
 * Records a use: the new signature counter, backup state and `last_used_at`, only when the counter
 * advanced (or both are 0, for authenticators that do not count).
 * @returns false when the counter did not advance (a possible clone).
 */
export async function advancePasskeyCounter(em: EntityManager, tenantId: string, passkeyId: string, newCounter: number, backedUp: boolean): Promise<boolean> {
  const advanced = await em.execute(
    `update passkey set counter = ?, backed_up = ?, last_used_at = ?
        where id = ? and tenant_id = ? and (counter < ? or (counter = 0 and ? = 0)) returning id`,
    [newCounter, backedUp, new Date(), passkeyId, tenantId, newCounter, newCounter],
  );
  return advanced.length > 0;
}

/** Deletes one passkey of a user of the tenant. @returns its name, or undefined when there was none. */
export async function deletePasskeyOfUser(em: EntityManager, tenantId: string, userId: string, passkeyId: string): Promise<string | undefined> {
  const deleted = (await em.execute('delete from passkey where id = ? and tenant_id = ? and user_id = ? returning name', [
    passkeyId, tenantId, userId,
  ])) as { name: string }[];
  return deleted[0]?.name;
}

/** Deletes every passkey of a user of the tenant. @returns the id and name of each. */
export async function deleteAllPasskeysOfUser(em: EntityManager, tenantId: string, userId: string): Promise<Pick<Passkey, 'id' | 'name'>[]> {
  return (await em.execute('delete from passkey where user_id = ? and tenant_id = ? returning id, name', [userId, tenantId])) as { id: string; name: string }[];
}
