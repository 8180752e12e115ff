import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { KeyringEntry } from '../config.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Field-level AES-256-GCM encryption with key versioning (docs/security.md). A ciphertext is the text
 * `<version>:<base64(iv ‖ tag ‖ ciphertext)>`; the last key of the ring encrypts, any key decrypts.
 * The associated data binds a ciphertext to its purpose (e.g. `totp:<userId>`), so it cannot be
 * copied into another row.
 */
export class Keyring {
  private readonly keys: Map<string, Buffer>;
  private readonly current: KeyringEntry;
  private readonly digestKeys = new Map<string, Buffer>();

  /** @throws Error when `entries` is empty. */
  constructor(entries: KeyringEntry[]) {
    const last = entries.at(-1);
    if (!last) throw new Error('keyring needs at least one key');
    this.current = last;
    this.keys = new Map(entries.map((e) => [e.version, e.key]));
  }

  /** Version label of the key that encrypts. */
  get currentVersion(): string {
    return this.current.version;
  }

  /** Encrypts UTF-8 `plaintext` under the newest key, bound to `associatedData`. */
  encrypt(plaintext: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${this.current.version}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /**
   * Decrypts a value made by {@link encrypt} with the same associated data.
   * @throws Error when the key version is not in the ring or authentication fails.
   */
  decrypt(ciphertext: string, associatedData: string): string {
    const sep = ciphertext.indexOf(':');
    const key = sep > 0 ? this.keys.get(ciphertext.slice(0, sep)) : undefined;
    if (!key) throw new Error('ciphertext key version is not in the keyring');
    const raw = Buffer.from(ciphertext.slice(sep + 1), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  /**
   * Keyed digest of `value` for exact-match look-ups of data stored encrypted (a "blind index"):
   * `<version>:<hex HMAC-SHA256>` under a key derived from the newest key by HKDF-SHA256 (RFC 5869)
   * with info `digest:<purpose>`, so the AES key itself never signs. Without the keyring the digest
   * says nothing about the value.
   */
  digest(value: string, purpose: string): string {
    return this.digestWith(this.current.version, value, purpose);
  }

  /** {@link digest} of `value` under every key of the ring (a row digested before a rotation matches one of them). */
  digests(value: string, purpose: string): string[] {
    return [...this.keys.keys()].map((version) => this.digestWith(version, value, purpose));
  }

  private digestWith(version: string, value: string, purpose: string): string {
    const cacheKey = `${version}\u0000${purpose}`;
    let key = this.digestKeys.get(cacheKey);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.keys.get(version)!, Buffer.alloc(0), `digest:${purpose}`, 32));
      this.digestKeys.set(cacheKey, key);
    }
    return `${version}:${createHmac('sha256', key).update(value, 'utf8').digest('hex')}`;
  }

  /** True when `ciphertext` was made under an older key than the current one. */
  needsReencryption(ciphertext: string): boolean {
    return !ciphertext.startsWith(`${this.current.version}:`);
  }
}
