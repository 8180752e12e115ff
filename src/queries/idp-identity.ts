import type { EntityManager } from '@mikro-orm/postgresql';
import { IdpIdentitySchema, type IdpIdentity } from '../entities/idp.js';

/**
 * The queries of the `idp_identity` table (docs/architecture.md "Rules", data access): the links of
 * users to accounts at the upstream provider. Each function takes the caller's entity manager (pass
 * the transaction when it must run in one; the caller owns it); every statement is scoped by tenant id.
 */

/** Inserts a link. */
export async function insertIdentity(em: EntityManager, identity: IdpIdentity): Promise<void> {
  await em.insert(IdpIdentitySchema, identity);
}

/** Locks (`FOR UPDATE`) and returns the tenant's link of (issuer, subject), or undefined. */
export async function lockIdentity(tx: EntityManager, tenantId: string, issuer: string, subject: string): Promise<Pick<IdpIdentity, 'id' | 'userId'> | undefined> {
  const links = (await tx.execute(
    'select id, user_id from idp_identity where tenant_id = ? and issuer = ? and subject = ? for update',
    [tenantId, issuer, subject],
  )) as { id: string; user_id: string }[];
  return links[0] ? { id: links[0].id, userId: links[0].user_id } : undefined;
}

/** Deletes one link of the tenant. */
export async function deleteIdentity(tx: EntityManager, tenantId: string, identityId: string): Promise<void> {
  await tx.execute('delete from idp_identity where id = ? and tenant_id = ?', [identityId, tenantId]);
}

/** Stamps `last_login_at` of the tenant's link of (issuer, subject). */
export async function touchIdentityLogin(tx: EntityManager, tenantId: string, issuer: string, subject: string, now: Date): Promise<void> {
  await tx.execute('update idp_identity set last_login_at = ? where tenant_id = ? and issuer = ? and subject = ?', [
    now, tenantId, issuer, subject,
  ]);
}

/** A link as the data export shows it. */
export type ExportedIdentity = Pick<IdpIdentity, 'issuer' | 'subject' | 'email' | 'createdAt' | 'lastLoginAt'>;

/** The links of a user of the tenant, oldest first. */
export async function findIdentitiesOfUser(em: EntityManager, tenantId: string, userId: string): Promise<ExportedIdentity[]> {
  const rows = (await em.execute(
    `select issuer, subject, email, created_at, last_login_at from idp_identity
        where tenant_id = ? and user_id = ? order by created_at`,
    [tenantId, userId],
  )) as { issuer: string; subject: string; email: string | null; created_at: Date | string; last_login_at: Date | string | null }[];
  // plain SQL answers timestamps as the driver gives them (text on MikroORM's connection): made Dates here
  return rows.map((row) => ({
    issuer: row.issuer, subject: row.subject, email: row.email,
    createdAt: new Date(row.created_at), lastLoginAt: row.last_login_at === null ? null : new Date(row.last_login_at),
  }));
}

/** The provider accounts (issuer, subject) of the tenant's users `userIds`, by user id, oldest link first (the user export). */
export async function findProviderAccountsOfUsers(em: EntityManager, tenantId: string, userIds: readonly string[]): Promise<Map<string, ProviderAccount[]>> {
  const byUser = new Map<string, ProviderAccount[]>();
  if (userIds.length === 0) return byUser;
  const rows = (await em.execute(
    'select user_id, issuer, subject from idp_identity where tenant_id = ? and user_id in (?) order by created_at, id',
    [tenantId, userIds],
  )) as { user_id: string; issuer: string; subject: string }[];
  for (const row of rows) {
    const accounts = byUser.get(row.user_id) ?? [];
    accounts.push({ issuer: row.issuer, subject: row.subject });
    byUser.set(row.user_id, accounts);
  }
  return byUser;
}

/**
 * Deletes the links of a user of the tenant, all or all but the one of (`keep.issuer`, `keep.subject`).
 * @returns how many were deleted.
 */
export async function deleteIdentitiesOfUser(tx: EntityManager, tenantId: string, userId: string, keep?: { issuer: string; subject: string }): Promise<number> {
  const rows = keep
    ? await tx.execute('delete from idp_identity where user_id = ? and tenant_id = ? and not (issuer = ? and subject = ?) returning 1', [
        userId, tenantId, keep.issuer, keep.subject,
      ])
    : await tx.execute('delete from idp_identity where user_id = ? and tenant_id = ? returning 1', [userId, tenantId]);
  return (rows as unknown[]).length;
}

/** An (issuer, subject) pair: one account at one provider. */
export interface ProviderAccount {
  issuer: string;
  subject: string;
}

/**
 * Which of `accounts` a user of the tenant is already linked to (an import must not give one
 * provider account to two people), as `issuer\nsubject` keys.
 */
export async function findLinkedProviderAccounts(em: EntityManager, tenantId: string, accounts: readonly ProviderAccount[]): Promise<Set<string>> {
  if (accounts.length === 0) return new Set();
  const rows = await em.execute<{ issuer: string; subject: string }[]>(
    `select i.issuer, i.subject from idp_identity i
       join unnest(array[?]::text[], array[?]::text[]) as wanted(issuer, subject) on wanted.issuer = i.issuer and wanted.subject = i.subject
      where i.tenant_id = ?`,
    [accounts.map((a) => a.issuer), accounts.map((a) => a.subject), tenantId],
  );
  return new Set(rows.map((r) => `${r.issuer}\n${r.subject}`));
}

/**
 * Inserts links (an import, docs/import.md "Importing"), skipping any whose (tenant, issuer, subject)
 * a concurrent sign-in linked meanwhile (`on conflict do nothing`). At most a few thousand a call.
 */
export async function insertIdentitiesUnlessTaken(tx: EntityManager, identities: readonly IdpIdentity[]): Promise<void> {
  if (identities.length === 0) return;
  await tx.execute(
    `insert into idp_identity (id, tenant_id, user_id, issuer, subject, email, created_at, last_login_at)
          values ${identities.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
          on conflict do nothing`,
    identities.flatMap((i) => [i.id, i.tenantId, i.userId, i.issuer, i.subject, i.email, i.createdAt, i.lastLoginAt]),
  );
}
