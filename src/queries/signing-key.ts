import type { EntityManager } from '@mikro-orm/postgresql';
import type { OidcSigningKey } from '../entities/oidc.js';

/**
 * The queries of the `oidc_signing_key` table (docs/architecture.md "Rules", data access): each
 * tenant's ES256 keys, the private JWK as keyring ciphertext. Each function takes the caller's entity
 * manager (pass the transaction when it must run in one; the caller owns it).
 */

/** A stored key as the provider reads it. */
export type SigningKeyRow = Pick<OidcSigningKey, 'kid' | 'alg' | 'privateJwkEnc' | 'createdAt' | 'retiredAt'>;

/** The tenant's live key and those retired less than `publishSeconds` ago, the live one first, then newest first. */
export async function findPublishedKeys(em: EntityManager, tenantId: string, publishSeconds: number): Promise<SigningKeyRow[]> {
  const rows = (await em.execute(
    `select kid, alg, private_jwk_enc, created_at, retired_at from oidc_signing_key
        where tenant_id = ? and (retired_at is null or retired_at > now() - make_interval(secs => ?))
        order by (retired_at is null) desc, created_at desc`,
    [tenantId, publishSeconds],
  )) as { kid: string; alg: string; private_jwk_enc: string; created_at: Date; retired_at: Date | null }[];
  return rows.map((row) => ({ kid: row.kid, alg: row.alg, privateJwkEnc: row.private_jwk_enc, createdAt: row.created_at, retiredAt: row.retired_at }));
}

/** Inserts a key (created now). */
export async function insertSigningKey(em: EntityManager, tenantId: string, kid: string, alg: string, privateJwkEnc: string): Promise<void> {
  await em.execute('insert into oidc_signing_key (kid, tenant_id, alg, private_jwk_enc, created_at) values (?, ?, ?, ?, now())', [
    kid, tenantId, alg, privateJwkEnc,
  ]);
}

/** Retires the tenant's live keys (now). */
export async function retireLiveKeys(tx: EntityManager, tenantId: string): Promise<void> {
  await tx.execute('update oidc_signing_key set retired_at = now() where tenant_id = ? and retired_at is null', [tenantId]);
}

/** Deletes the tenant's keys retired more than `publishSeconds` ago. */
export async function deleteKeysRetiredBefore(tx: EntityManager, tenantId: string, publishSeconds: number): Promise<void> {
  await tx.execute(`delete from oidc_signing_key where tenant_id = ? and retired_at < now() - make_interval(secs => ?)`, [tenantId, publishSeconds]);
}

/** The tenant's keys with their private JWK ciphertexts, by kid (key rotation). */
export async function findKeyCiphertexts(em: EntityManager, tenantId: string): Promise<Pick<SigningKeyRow, 'kid' | 'privateJwkEnc'>[]> {
  const rows = (await em.execute('select kid, private_jwk_enc from oidc_signing_key where tenant_id = ? order by kid', [tenantId])) as {
    kid: string;
    private_jwk_enc: string;
  }[];
  return rows.map((row) => ({ kid: row.kid, privateJwkEnc: row.private_jwk_enc }));
}

/** Replaces a key's private JWK ciphertext, conditional on it still being `previous`. @returns false when it changed meanwhile. */
export async function replaceKeyCiphertext(em: EntityManager, tenantId: string, kid: string, fresh: string, previous: string): Promise<boolean> {
  const updated = await em.execute('update oidc_signing_key set private_jwk_enc = ? where kid = ? and tenant_id = ? and private_jwk_enc = ? returning kid', [
    fresh, kid, tenantId, previous,
  ]);
  return updated.length > 0;
}
