import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Keyring } from '../../security/keyring.js';
import { deleteKeysRetiredBefore, findPublishedKeys, insertSigningKey, retireLiveKeys, type SigningKeyRow } from './signing-key-queries.js';

/** Signing algorithm of ID tokens and JWT artefacts: ECDSA P-256 with SHA-256 (RFC 7518 §3.4). */
export const SIGNING_ALG = 'ES256';

/**
 * Seconds a retired key stays in the JWKS: longer than anything it signed lives (ID tokens and
 * access tokens live at most one hour, docs/oidc.md "Key rotation").
 */
export const RETIRED_KEY_PUBLISH_SECONDS = 2 * 3600;

/** A private JWK as oidc-provider takes it in its `jwks` option. */
export type PrivateJwk = Record<string, unknown> & { kid: string; alg: string; use: string };

/** The keyring's associated data of a signing key's private JWK. */
export const signingKeyAad = (kid: string): string => `oidc-signing-key:${kid}`;
const keyAad = signingKeyAad;

function newKey(): PrivateJwk {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return { ...jwk, kid: randomBytes(12).toString('base64url'), alg: SIGNING_ALG, use: 'sig' };
}

/**
 * The ES256 signing keys of each tenant's OpenID Provider (docs/oidc.md "Key rotation"): private
 * keys encrypted under the keyring, the newest live one signs, retired ones stay published for
 * RETIRED_KEY_PUBLISH_SECONDS so tokens they signed still verify.
 */
export class SigningKeyService {
  constructor(private readonly keyring: Keyring) {}

  /**
   * The tenant's keys for its provider, the signing key first; creates the first key when the
   * tenant has none (concurrent first calls keep one of theirs each; both are valid keys).
   */
  async keysOf(em: EntityManager, tenantId: string): Promise<PrivateJwk[]> {
    const rows = await this.published(em, tenantId);
    if (rows.length === 0) {
      await this.insert(em, tenantId, newKey());
      return (await this.published(em, tenantId)).map((row) => this.decrypt(row));
    }
    return rows.map((row) => this.decrypt(row));
  }

  /**
   * Rotates the tenant's key: a new key signs from now on, the previous ones are retired (still
   * published until their tokens expired), and keys retired longer ago are deleted.
   * @returns the new key id.
   */
  async rotate(em: EntityManager, tenantId: string): Promise<string> {
    return em.transactional(async (tx) => {
      await retireLiveKeys(tx, tenantId);
      await deleteKeysRetiredBefore(tx, tenantId, RETIRED_KEY_PUBLISH_SECONDS);
      const key = newKey();
      await this.insert(tx, tenantId, key);
      return key.kid;
    });
  }

  private async published(em: EntityManager, tenantId: string): Promise<SigningKeyRow[]> {
    return findPublishedKeys(em, tenantId, RETIRED_KEY_PUBLISH_SECONDS);
  }

  private async insert(em: EntityManager, tenantId: string, key: PrivateJwk): Promise<void> {
    await insertSigningKey(em, tenantId, key.kid, key.alg, this.keyring.encrypt(JSON.stringify(key), keyAad(key.kid)));
  }

  private decrypt(row: SigningKeyRow): PrivateJwk {
    return JSON.parse(this.keyring.decrypt(row.privateJwkEnc, keyAad(row.kid))) as PrivateJwk;
  }
}
