import { createCipheriv, pbkdf2, scrypt, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto';
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';

/**
 * Password hashes made by another system and imported with their users (docs/import.md "Password
 * hashes"). Each is kept until the user's next successful sign-in, which replaces it with argon2id.
 *
 * The stored form (in `app_user.password_hash`) is this module's JSON record, `{"algorithm": …}`, so
 * it can never be taken for one of the service's own argon2id PHC strings (which start with `$`).
 */

/** The algorithms an import accepts (the contract's `password.algorithm`). */
export const FOREIGN_ALGORITHMS = ['argon2', 'bcrypt', 'scrypt', 'firebase-scrypt', 'pbkdf2'] as const;
export type ForeignAlgorithm = (typeof FOREIGN_ALGORITHMS)[number];

/** PBKDF2 digests accepted (Django's `pbkdf2_sha256`, `pbkdf2_sha1`, and the explicit form). */
export const PBKDF2_DIGESTS = ['sha1', 'sha256', 'sha512'] as const;
export type Pbkdf2Digest = (typeof PBKDF2_DIGESTS)[number];

/** A foreign hash with its parameters; binary values are standard base64. */
export type ForeignHash =
  | { algorithm: 'argon2'; hash: string }
  | { algorithm: 'bcrypt'; hash: string }
  | { algorithm: 'scrypt'; hash: string; salt: string; N: number; r: number; p: number }
  | { algorithm: 'firebase-scrypt'; hash: string; salt: string; signerKey: string; saltSeparator: string; rounds: number; memCost: number }
  | { algorithm: 'pbkdf2'; hash: string; salt: string; iterations: number; digest: Pbkdf2Digest };

/** Why an imported password record was refused (the per-user `reason` of an import). */
export type ForeignHashProblem = 'unsupported_algorithm' | 'malformed_hash';

/** The outcome of {@link parseForeignHash}. */
export type ParsedForeignHash = { ok: true; record: ForeignHash } | { ok: false; reason: ForeignHashProblem };

/** Most memory one scrypt verification may use (bytes): 128 · N · r · p must stay below it. */
export const SCRYPT_MAX_MEMORY = 256 * 1024 * 1024;
/** Most PBKDF2 iterations accepted (Django 5.1 uses 870,000). */
export const PBKDF2_MAX_ITERATIONS = 5_000_000;
/** Longest base64 value accepted in a record (a hash, salt or key). */
const MAX_BASE64_LENGTH = 1024;

const ARGON2_PHC = /^\$argon2(id|i|d)\$(v=\d+\$)?([a-z]+=\d+(,[a-z]+=\d+)*)\$[A-Za-z0-9+/]+={0,2}\$[A-Za-z0-9+/]+={0,2}$/;
/** Most argon2 memory (KiB) and passes accepted in an imported PHC string. */
const ARGON2_MAX_MEMORY_KIB = 262_144;
const ARGON2_MAX_PASSES = 16;

/** A PHC string of argon2 whose parameters stay within the limits above. */
function argon2Phc(hash: string): boolean {
  const match = ARGON2_PHC.exec(hash);
  if (!match) return false;
  const params = new Map(match[3]!.split(',').map((pair) => pair.split('=') as [string, string]));
  const m = Number(params.get('m'));
  const t = Number(params.get('t'));
  const p = Number(params.get('p'));
  return m >= 8 && m <= ARGON2_MAX_MEMORY_KIB && t >= 1 && t <= ARGON2_MAX_PASSES && p >= 1 && p <= 16;
}
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DJANGO_PBKDF2 = /^pbkdf2_(sha1|sha256)\$(\d{1,9})\$([^$]{1,256})\$([A-Za-z0-9+/]+={0,2})$/;

function base64Value(value: unknown, allowEmpty = false): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_BASE64_LENGTH) return undefined;
  if (value === '') return allowEmpty ? value : undefined;
  if (!BASE64.test(value) || value.length % 4 === 1) return undefined;
  return value;
}

function integer(value: unknown, min: number, max: number): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? value : undefined;
}

/**
 * Validates an imported password record (`{algorithm, hash, ...params}` as the contract spells it)
 * and brings it to its stored shape: Django's `pbkdf2_sha256$iterations$salt$hash` becomes the
 * explicit PBKDF2 form (the salt, text in Django, as base64 of its UTF-8 bytes).
 * Limits: scrypt and Firebase's memory cost at most {@link SCRYPT_MAX_MEMORY}, PBKDF2 at most
 * {@link PBKDF2_MAX_ITERATIONS}, so a record cannot make one sign-in arbitrarily expensive.
 * @returns the record, or the reason it was refused (never throws).
 */
export function parseForeignHash(input: unknown): ParsedForeignHash {
  const malformed: ParsedForeignHash = { ok: false, reason: 'malformed_hash' };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return malformed;
  const fields = input as Record<string, unknown>;
  const algorithm = fields.algorithm;
  if (typeof algorithm !== 'string' || !(FOREIGN_ALGORITHMS as readonly string[]).includes(algorithm)) {
    return { ok: false, reason: 'unsupported_algorithm' };
  }
  const hash = fields.hash;
  if (typeof hash !== 'string' || hash.length === 0 || hash.length > MAX_BASE64_LENGTH) return malformed;
  switch (algorithm as ForeignAlgorithm) {
    case 'argon2':
      return argon2Phc(hash) ? { ok: true, record: { algorithm: 'argon2', hash } } : malformed;
    case 'bcrypt':
      return BCRYPT.test(hash) ? { ok: true, record: { algorithm: 'bcrypt', hash } } : malformed;
    case 'scrypt': {
      const salt = base64Value(fields.salt, true);
      const N = integer(fields.N, 2, 2 ** 24);
      const r = integer(fields.r, 1, 64);
      const p = integer(fields.p, 1, 64);
      if (!base64Value(hash) || salt === undefined || N === undefined || r === undefined || p === undefined) return malformed;
      if ((N & (N - 1)) !== 0 || 128 * N * r * p > SCRYPT_MAX_MEMORY) return malformed;
      return { ok: true, record: { algorithm: 'scrypt', hash, salt, N, r, p } };
    }
    case 'firebase-scrypt': {
      const salt = base64Value(fields.salt, true);
      const signerKey = base64Value(fields.signerKey);
      const saltSeparator = base64Value(fields.saltSeparator, true);
      const rounds = integer(fields.rounds, 1, 64);
      const memCost = integer(fields.memCost, 1, 24);
      if (!base64Value(hash) || salt === undefined || !signerKey || saltSeparator === undefined || rounds === undefined || memCost === undefined) {
        return malformed;
      }
      if (128 * 2 ** memCost * rounds > SCRYPT_MAX_MEMORY) return malformed;
      if (Buffer.from(hash, 'base64').length !== Buffer.from(signerKey, 'base64').length) return malformed;
      return { ok: true, record: { algorithm: 'firebase-scrypt', hash, salt, signerKey, saltSeparator, rounds, memCost } };
    }
    case 'pbkdf2': {
      const django = DJANGO_PBKDF2.exec(hash);
      if (django) {
        const iterations = integer(Number(django[2]), 1, PBKDF2_MAX_ITERATIONS);
        if (iterations === undefined || !base64Value(django[4])) return malformed;
        const salt = Buffer.from(django[3]!, 'utf8').toString('base64');
        return { ok: true, record: { algorithm: 'pbkdf2', hash: django[4]!, salt, iterations, digest: django[1] as Pbkdf2Digest } };
      }
      const salt = base64Value(fields.salt, true);
      const iterations = integer(fields.iterations, 1, PBKDF2_MAX_ITERATIONS);
      const digest = fields.digest;
      if (!base64Value(hash) || salt === undefined || iterations === undefined) return malformed;
      if (typeof digest !== 'string' || !(PBKDF2_DIGESTS as readonly string[]).includes(digest)) return malformed;
      return { ok: true, record: { algorithm: 'pbkdf2', hash, salt, iterations, digest: digest as Pbkdf2Digest } };
    }
  }
}

/** The stored form of a record (the `password_hash` column): its JSON. */
export function storeForeignHash(record: ForeignHash): string {
  return JSON.stringify(record);
}

/** True when a stored password hash is an imported record rather than the service's own argon2id. */
export function isForeignHash(stored: string): boolean {
  return stored.startsWith('{');
}

/**
 * Reads a stored record back ({@link storeForeignHash}); null for anything else (the service's own
 * PHC strings, or a stored value that does not parse, which then verifies no password).
 */
export function readForeignHash(stored: string): ForeignHash | null {
  if (!isForeignHash(stored)) return null;
  try {
    const parsed = parseForeignHash(JSON.parse(stored));
    return parsed.ok ? parsed.record : null;
  } catch {
    return null;
  }
}

function scryptAsync(password: BinaryLike, salt: BinaryLike, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function pbkdf2Async(password: BinaryLike, salt: BinaryLike, iterations: number, keylen: number, digest: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, iterations, keylen, digest, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Constant-time equality of a computed value and the stored one (crypto.timingSafeEqual). */
function sameBytes(computed: Buffer, expected: Buffer): boolean {
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/**
 * Firebase Authentication's modified scrypt (github.com/firebase/scrypt, the "password hash
 * parameters" of a project): the key is scrypt(password, salt ‖ saltSeparator, N = 2^memCost,
 * r = rounds, p = 1, 64 bytes); the hash is the project's signer key encrypted with AES-256-CTR under
 * the key's first 32 bytes and an all-zero counter block.
 */
async function firebaseScryptHash(password: string, record: Extract<ForeignHash, { algorithm: 'firebase-scrypt' }>): Promise<Buffer> {
  const salt = Buffer.concat([Buffer.from(record.salt, 'base64'), Buffer.from(record.saltSeparator, 'base64')]);
  const N = 2 ** record.memCost;
  const key = await scryptAsync(Buffer.from(password, 'utf8'), salt, 64, { N, r: record.rounds, p: 1, maxmem: 128 * N * record.rounds + 1024 * 1024 });
  const cipher = createCipheriv('aes-256-ctr', key.subarray(0, 32), Buffer.alloc(16, 0));
  return Buffer.concat([cipher.update(Buffer.from(record.signerKey, 'base64')), cipher.final()]);
}

/**
 * Verifies a password against a foreign record, by its algorithm: argon2 (the `argon2` package),
 * bcrypt (`bcryptjs`; `$2y$` is read as `$2b$`, the same algorithm), scrypt and PBKDF2
 * (`node:crypto`, compared with `timingSafeEqual`), Firebase's modified scrypt (above).
 * @returns true when the password matches; false when it does not, or the record cannot be computed.
 */
export async function verifyForeignHash(record: ForeignHash, password: string): Promise<boolean> {
  try {
    switch (record.algorithm) {
      case 'argon2':
        return await argon2.verify(record.hash, password);
      case 'bcrypt':
        return await bcrypt.compare(password, record.hash.replace(/^\$2y\$/, '$2b$'));
      case 'scrypt': {
        const expected = Buffer.from(record.hash, 'base64');
        const memory = 128 * record.N * record.r * record.p;
        const key = await scryptAsync(Buffer.from(password, 'utf8'), Buffer.from(record.salt, 'base64'), expected.length, {
          N: record.N, r: record.r, p: record.p, maxmem: memory + 1024 * 1024,
        });
        return sameBytes(key, expected);
      }
      case 'firebase-scrypt':
        return sameBytes(await firebaseScryptHash(password, record), Buffer.from(record.hash, 'base64'));
      case 'pbkdf2': {
        const expected = Buffer.from(record.hash, 'base64');
        const key = await pbkdf2Async(Buffer.from(password, 'utf8'), Buffer.from(record.salt, 'base64'), record.iterations, expected.length, record.digest);
        return sameBytes(key, expected);
      }
    }
  } catch {
    return false;
  }
}

/**
 * The one verifier interface (docs/import.md): verifies `password` against a stored imported record
 * (the `password_hash` column's JSON), chosen by the record's algorithm.
 * @returns false for a wrong password and for a stored value that is no valid record.
 */
export async function verify(password: string, stored: string): Promise<boolean> {
  const record = readForeignHash(stored);
  return record ? verifyForeignHash(record, password) : false;
}
