import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeySchema, type ApiKey } from '../entities/api-key.js';

/**
 * The queries of the `api_key` table (docs/architecture.md "Rules", data access): the administration
 * of keys, the look-up of a presented key on every API-key request and its throttled use stamp. Each
 * function takes the caller's entity manager (pass the transaction when it must run in one; the
 * caller owns it); every statement is scoped by tenant id but the look-up by hash, whose tenant the
 * caller compares.
 */

/** Inserts a key. */
export async function insertApiKey(em: EntityManager, apiKey: ApiKey): Promise<void> {
  await em.insert(ApiKeySchema, apiKey);
}

/** The tenant's keys, newest first; revoked ones only when `includeRevoked`. */
export async function findApiKeysOfTenant(em: EntityManager, tenantId: string, includeRevoked: boolean): Promise<ApiKey[]> {
  return em.find(
    ApiKeySchema,
    includeRevoked ? { tenantId } : { tenantId, revokedAt: null },
    { orderBy: { createdAt: 'desc', id: 'desc' }, disableIdentityMap: true },
  );
}

/** The tenant's key `id`, or null. */
export async function findApiKey(em: EntityManager, tenantId: string, id: string): Promise<ApiKey | null> {
  return em.findOne(ApiKeySchema, { id, tenantId }, { disableIdentityMap: true });
}

/** Revokes the tenant's key unless it already is. @returns false when it already was. */
export async function revokeApiKey(em: EntityManager, tenantId: string, id: string, now: Date): Promise<boolean> {
  return (await em.nativeUpdate(ApiKeySchema, { id, tenantId, revokedAt: null }, { revokedAt: now })) > 0;
}

/**
 * The key whose SHA-256 hash is `keyHash`, in any tenant (the caller compares the tenant, to answer
 * `tenant_mismatch`); undefined when unknown. Timestamps may come back as `Date` or as text depending
 * on the driver's type parsing.
 */
export async function findApiKeyByHash(
  em: EntityManager,
  keyHash: string,
): Promise<(Pick<ApiKey, 'id' | 'tenantId' | 'environment'> & { expiresAt: Date | string | null; revokedAt: Date | string | null; lastUsedAt: Date | string | null }) | undefined> {
  const rows = (await em.execute(
    'select id, tenant_id, environment, expires_at, revoked_at, last_used_at from api_key where key_hash = ?',
    [keyHash],
  )) as {
    id: string; tenant_id: string; environment: ApiKey['environment'];
    expires_at: Date | string | null; revoked_at: Date | string | null; last_used_at: Date | string | null;
  }[];
  const row = rows[0];
  return row
    ? { id: row.id, tenantId: row.tenant_id, environment: row.environment, expiresAt: row.expires_at, revokedAt: row.revoked_at, lastUsedAt: row.last_used_at }
    : undefined;
}

/** Sets `last_used_at` to `now` unless it was set after `notBefore` (at most one write per interval). */
export async function touchApiKeyLastUsed(em: EntityManager, apiKeyId: string, now: Date, notBefore: Date): Promise<void> {
  await em.execute(
    `update api_key set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)`,
    [now, apiKeyId, notBefore],
  );
}
