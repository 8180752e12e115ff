import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Keyring } from '../../security/keyring.js';
import { deleteKeysRetiredBefore, findPublishedKeys, insertSigningKey, retireLiveKeys, type SigningKeyRow } from '../../queries/signing-key.js';

/** Signing algorithm of JWT access tokens (RFC 9068): ECDSA P-256 with SHA-256 (RFC 7518 §3.4). */
export const SIGNING_ALG = 'ES256';

/**
 * Default signing algorithm of ID tokens: RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3), the one
 * OpenID Connect Discovery 1.0 §3 requires every provider to offer and most relying parties assume.
 */
export const ID_TOKEN_SIGNING_ALG = 'RS256';

/** The algorithms a tenant has a live key of: every ID token algorithm a client may ask for. */
export const SIGNING_ALGS = [ID_TOKEN_SIGNING_ALG, SIGNING_ALG] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** RSA modulus length in bits of RS256 keys (NIST SP 800-57: 112-bit security until 2030). */
const RSA_MODULUS_BITS = 2048;

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

function newKey(alg: SigningAlg): PrivateJwk {
  const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: RSA_MODULUS_BITS }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = pair.privateKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return { ...jwk, kid: randomBytes(12).toString('base64url'), alg, use: 'sig' };
}

/**
 * The signing keys of each tenant's OpenID Provider (docs/oidc.md "Key rotation"): one live RS256
 * and one live ES256 key per tenant, private keys encrypted under the keyring; the newest live key
 * of an algorithm signs, retired ones stay published for RETIRED_KEY_PUBLISH_SECONDS so tokens they
 * signed still verify.
 */
export class SigningKeyService {
  constructor(private readonly keyring: Keyring) {}

  /**
   * The tenant's keys for its provider, the live keys first; creates a live key of each algorithm of
   * SIGNING_ALGS the tenant lacks (a new tenant, or one made before RS256 keys existed: it gets its
   * RS256 key here, on its provider's first use). Concurrent first calls keep one of theirs each;
   * both are valid keys.
   */
  async keysOf(em: EntityManager, tenantId: string): Promise<PrivateJwk[]> {
    const rows = await this.published(em, tenantId);
    const missing = SIGNING_ALGS.filter((alg) => !rows.some((row) => row.retiredAt === null && row.alg === alg));
    if (missing.length > 0) {
      for (const alg of missing) await this.insert(em, tenantId, newKey(alg));
      return (await this.published(em, tenantId)).map((row) => this.decrypt(row));
    }
    return rows.map((row) => this.decrypt(row));
  }

  /**
   * Rotates the tenant's keys: a new key of each algorithm signs from now on, the previous ones are
   * retired (still published until their tokens expired), and keys retired longer ago are deleted.
   * @returns the new key ids by algorithm.
   */
  async rotate(em: EntityManager, tenantId: string): Promise<Record<SigningAlg, string>> {
    return em.transactional(async (tx) => {
      await retireLiveKeys(tx, tenantId);
      await deleteKeysRetiredBefore(tx, tenantId, RETIRED_KEY_PUBLISH_SECONDS);
      const kids = {} as Record<SigningAlg, string>;
      for (const alg of SIGNING_ALGS) {
        const key = newKey(alg);
        await this.insert(tx, tenantId, key);
        kids[alg] = key.kid;
      }
      return kids;
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
