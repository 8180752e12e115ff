import argon2 from 'argon2';
import pLimit from 'p-limit';
import { isForeignHash, verify as verifyForeign } from './foreign-passwords.js';

/**
 * argon2id parameters: OWASP Password Storage Cheat Sheet minimum (m = 19 MiB, t = 2, p = 1).
 * `memoryCost` is in KiB.
 */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

let dummyHash: Promise<string> | undefined;

/**
 * Most argon2id computations in flight in this process: `PASSWORD_HASH_CONCURRENCY`, else libuv's
 * thread-pool size (which `npm start` sizes to the cores, src/threadpool.ts). Hashes beyond it wait
 * in this queue instead of libuv's, so a login storm never holds every pool thread hostage for
 * other pool work, and with `PASSWORD_HASH_CONCURRENCY=1` on a small machine a core stays free
 * for the event loop (docs/performance.md, "Hashing").
 */
export const PASSWORD_HASH_CONCURRENCY = Math.max(
  1,
  Math.floor(Number(process.env.PASSWORD_HASH_CONCURRENCY) || Number(process.env.UV_THREADPOOL_SIZE) || 4),
);
const hashing = pLimit(PASSWORD_HASH_CONCURRENCY);

/**
 * Hashes a password with argon2id (RFC 9106) at {@link ARGON2_OPTIONS}. Runs on libuv's thread pool,
 * off the event loop.
 * @returns the PHC string (`$argon2id$v=19$m=19456,t=2,p=1$…`).
 */
export function hashPassword(password: string): Promise<string> {
  return hashing(() => argon2.hash(password, ARGON2_OPTIONS));
}

/** Spends one argon2id verification against a fixed hash (the cost of a wrong password). */
async function spendOneVerification(password: string): Promise<void> {
  dummyHash ??= hashPassword('timing-equaliser-not-a-real-password');
  const hash = await dummyHash;
  await hashing(() => argon2.verify(hash, password)).catch(() => false);
}

/**
 * Verifies a password against a stored hash: the service's own argon2id PHC string, or a hash
 * imported from another system (security/foreign-passwords.ts, docs/import.md), verified by its
 * algorithm on the same queue. With `hash` null (unknown account, or one with no password) it still
 * spends one verification against a fixed hash so timing does not reveal accounts, and answers
 * false. A wrong password for an imported hash spends that verification too, so it never costs less
 * than for any other user.
 */
export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (!hash) {
    await spendOneVerification(password);
    return false;
  }
  if (isForeignHash(hash)) {
    const ok = await hashing(() => verifyForeign(password, hash)).catch(() => false);
    if (!ok) await spendOneVerification(password);
    return ok;
  }
  try {
    return await hashing(() => argon2.verify(hash, password));
  } catch {
    return false;
  }
}

/**
 * True when a stored hash should be replaced at the next successful sign-in: an imported (foreign)
 * hash, or an argon2 hash made with other parameters than {@link ARGON2_OPTIONS}.
 */
export function passwordNeedsRehash(hash: string): boolean {
  if (isForeignHash(hash)) return true;
  try {
    return argon2.needsRehash(hash, ARGON2_OPTIONS);
  } catch {
    return false;
  }
}
