import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random opaque token of `bytes` bytes (default 32 = 256 bits), base64url without padding. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** `length` characters drawn uniformly from [0-9A-Za-z] with a CSPRNG (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** `digits` decimal digits from a CSPRNG, leading zeros kept (for one-time codes). */
export function randomDigits(digits: number): string {
  return randomInt(0, 10 ** digits).toString().padStart(digits, '0');
}

/** Lower-case hex SHA-256 of a UTF-8 string: how opaque tokens are stored (64 characters). */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time string equality (OWASP ASVS V11); different lengths answer false. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
