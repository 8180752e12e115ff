import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import { describe, expect, it, vi } from 'vitest';
import {
  parseForeignHash, readForeignHash, storeForeignHash, verify, verifyForeignHash, type ForeignHash,
} from '../../src/security/foreign-passwords.js';
import { passwordNeedsRehash, verifyPassword } from '../../src/security/passwords.js';
import { FIREBASE_SAMPLE } from '../helpers/foreign-hashes.js';

/**
 * The verifiers of imported password hashes (docs/import.md "Password hashes"), below HTTP: each
 * algorithm with vectors made by its reference implementation or published by its authors, a wrong
 * password, and malformed records.
 */

/** Parses a record the way an import does and returns its stored form. */
function stored(input: Record<string, unknown>): string {
  const parsed = parseForeignHash(input);
  if (!parsed.ok) throw new Error(`refused: ${parsed.reason}`);
  return storeForeignHash(parsed.record);
}

const hex64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');


describe('verify(password, stored) by algorithm', () => {
  it('firebase-scrypt: the published test vector (user1password) verifies, a wrong password does not', async () => {
    const record = stored(FIREBASE_SAMPLE);
    expect(await verify('user1password', record)).toBe(true);
    expect(await verify('user1passworD', record)).toBe(false);
    expect(await verify('user1password', stored({ ...FIREBASE_SAMPLE, saltSeparator: 'Cw==' }))).toBe(false);
    expect(await verify('user1password', stored({ ...FIREBASE_SAMPLE, salt: '52xEC+ixf3L2lw==' }))).toBe(false);
  });

  it('bcrypt: $2y$ as PHP writes it (the PHP manual\'s password_verify example), $2a$ and $2b$ made by bcryptjs', async () => {
    const php = stored({ algorithm: 'bcrypt', hash: '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a' });
    expect(await verify('rasmuslerdorf', php)).toBe(true);
    expect(await verify('rasmuslerdorF', php)).toBe(false);
    const b = bcrypt.hashSync('correct horse', 4);
    expect(b.startsWith('$2b$04$')).toBe(true);
    expect(await verify('correct horse', stored({ algorithm: 'bcrypt', hash: b }))).toBe(true);
    expect(await verify('correct horsf', stored({ algorithm: 'bcrypt', hash: b }))).toBe(false);
    const a = `$2a$${b.slice(4)}`;
    expect(await verify('correct horse', stored({ algorithm: 'bcrypt', hash: a }))).toBe(true);
  });

  it('argon2: argon2id and argon2i PHC strings made by the argon2 package', async () => {
    for (const type of [argon2.argon2id, argon2.argon2i] as const) {
      const hash = await argon2.hash('correct horse', { type, memoryCost: 4096, timeCost: 3, parallelism: 1 });
      const record = stored({ algorithm: 'argon2', hash });
      expect(await verify('correct horse', record)).toBe(true);
      expect(await verify('correct horsf', record)).toBe(false);
    }
  });

  it('scrypt: RFC 7914 section 12 vector, and one made by Python\'s hashlib.scrypt', async () => {
    const rfc = stored({
      algorithm: 'scrypt', N: 1024, r: 8, p: 16, salt: Buffer.from('NaCl').toString('base64'),
      hash: hex64('fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640'),
    });
    expect(await verify('password', rfc)).toBe(true);
    expect(await verify('passwore', rfc)).toBe(false);
    // hashlib.scrypt(b'correct horse', salt=b'NaCl-and-pepper', n=16384, r=8, p=1, dklen=32)
    const py = stored({
      algorithm: 'scrypt', N: 16384, r: 8, p: 1, salt: Buffer.from('NaCl-and-pepper').toString('base64'), hash: 'Xhj3ShAX31V3/B07fzXH67h2XBuRPA61/xu1ICvdwBc=',
    });
    expect(await verify('correct horse', py)).toBe(true);
    expect(await verify('correct horsf', py)).toBe(false);
  });

  it('pbkdf2: Django\'s pbkdf2_sha256 and pbkdf2_sha1 strings, the explicit form with RFC 6070\'s vector and sha512', async () => {
    // hashlib.pbkdf2_hmac('sha256', b'correct horse', b'seasalt42', 600000), as Django writes it
    const django = stored({ algorithm: 'pbkdf2', hash: 'pbkdf2_sha256$600000$seasalt42$JyZCN5d9UuHdUV4P8rHIitcsP2aOuQf7CM52HraLS0g=' });
    expect(await verify('correct horse', django)).toBe(true);
    expect(await verify('correct horsf', django)).toBe(false);
    const djangoSha1 = stored({ algorithm: 'pbkdf2', hash: 'pbkdf2_sha1$10000$seasalt42$RM3BiI0AWSARN2PuAPGbgWRt3vM=' });
    expect(await verify('correct horse', djangoSha1)).toBe(true);
    const rfc6070 = stored({
      algorithm: 'pbkdf2', digest: 'sha1', iterations: 4096, salt: Buffer.from('salt').toString('base64'), hash: hex64('4b007901b765489abead49d926f721d065a429c1'),
    });
    expect(await verify('password', rfc6070)).toBe(true);
    expect(await verify('passwore', rfc6070)).toBe(false);
    const sha512 = stored({
      algorithm: 'pbkdf2', digest: 'sha512', iterations: 1000, salt: Buffer.from([1, 2, 3, 4, ...Buffer.from('salt')]).toString('base64'),
      hash: 'TIzz5QQcPAiH5tY3f1+kihnzL8XISiwKT6ethubIfxhi/odbSONdHCPwlIOY6mYT+7XQGJhQl48UG7voSNJOvg==',
    });
    expect(await verify('correct horse', sha512)).toBe(true);
    expect(await verify('', sha512)).toBe(false);
  });
});

describe('malformed records', () => {
  const refused = (input: unknown) => {
    const parsed = parseForeignHash(input);
    return parsed.ok ? 'accepted' : parsed.reason;
  };

  it('an unknown algorithm is unsupported_algorithm; a bad hash or parameter is malformed_hash', () => {
    expect(refused({ algorithm: 'md5', hash: '5f4dcc3b5aa765d61d8327deb882cf99' })).toBe('unsupported_algorithm');
    expect(refused({ hash: 'x' })).toBe('unsupported_algorithm');
    expect(refused(null)).toBe('malformed_hash');
    expect(refused('pbkdf2_sha256$1$a$b')).toBe('malformed_hash');
    expect(refused({ algorithm: 'bcrypt', hash: '$2x$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'bcrypt', hash: '$2b$10$short' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'argon2', hash: '$argon2id$v=19$m=4096,t=3,p=1$not base64$x' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'argon2', hash: '$argon2id$v=19$m=4194304,t=3,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'argon2', hash: '$argon2id$v=19$m=4096,t=3,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA' })).toBe('accepted');
    expect(refused({ algorithm: 'scrypt', hash: 'AAAA', salt: 'AAAA', N: 1000, r: 8, p: 1 })).toBe('malformed_hash');
    expect(refused({ algorithm: 'scrypt', hash: 'AAAA', salt: 'AAAA', N: 2 ** 24, r: 8, p: 1 })).toBe('malformed_hash');
    expect(refused({ algorithm: 'scrypt', hash: 'AAAA', salt: 'AAAA', N: '16384', r: 8, p: 1 })).toBe('malformed_hash');
    expect(refused({ algorithm: 'scrypt', hash: 'not*base64', salt: 'AAAA', N: 16384, r: 8, p: 1 })).toBe('malformed_hash');
    expect(refused({ ...FIREBASE_SAMPLE, signerKey: undefined })).toBe('malformed_hash');
    expect(refused({ ...FIREBASE_SAMPLE, hash: 'AAAA' })).toBe('malformed_hash');
    expect(refused({ ...FIREBASE_SAMPLE, memCost: 30 })).toBe('malformed_hash');
    expect(refused({ algorithm: 'pbkdf2', hash: 'pbkdf2_md5$1000$salt$AAAA' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'pbkdf2', hash: 'AAAA', salt: 'AAAA', iterations: 1000, digest: 'md5' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'pbkdf2', hash: 'AAAA', salt: 'AAAA', iterations: 0, digest: 'sha256' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'pbkdf2', hash: 'AAAA', salt: 'AAAA', iterations: 10_000_000, digest: 'sha256' })).toBe('malformed_hash');
    expect(refused({ algorithm: 'bcrypt', hash: '' })).toBe('malformed_hash');
  });

  it('a stored value that is no valid record verifies no password', async () => {
    expect(readForeignHash('{"algorithm":"bcrypt"')).toBeNull();
    expect(await verify('', '{"algorithm":"scrypt","hash":"AAAA"}')).toBe(false);
    expect(await verify('x', '$argon2id$v=19$m=19456,t=2,p=1$x$y')).toBe(false);
    const broken: ForeignHash = { algorithm: 'argon2', hash: '$argon2id$v=19$m=1,t=1,p=1$AAAA$AAAA' };
    expect(await verifyForeignHash(broken, 'x')).toBe(false);
  });
});

describe('verifyPassword with an imported hash (security/passwords.ts)', () => {
  it('verifies through the foreign verifier and asks for a rehash; the service\'s own argon2id does not', async () => {
    const record = stored({ algorithm: 'bcrypt', hash: bcrypt.hashSync('correct horse', 4) });
    expect(await verifyPassword(record, 'correct horse')).toBe(true);
    expect(await verifyPassword(record, 'wrong')).toBe(false);
    expect(passwordNeedsRehash(record)).toBe(true);
  });

  it('a wrong password against a cheap imported hash costs one argon2id verification; the right one none', async () => {
    // counted, not timed: the work a wrong guess costs is one argon2id verification, as for an unknown account
    const cheap = stored({ algorithm: 'bcrypt', hash: bcrypt.hashSync('right', 4) });
    const verify = vi.spyOn(argon2, 'verify');
    try {
      expect(await verifyPassword(cheap, 'wrong')).toBe(false);
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify.mock.calls[0]![0]).toMatch(/^\$argon2id\$/);
      verify.mockClear();
      expect(await verifyPassword(cheap, 'right')).toBe(true);
      expect(verify).not.toHaveBeenCalled();
      expect(await verifyPassword(null, 'anything')).toBe(false);
      expect(verify).toHaveBeenCalledTimes(1);
    } finally {
      verify.mockRestore();
    }
  });
});
