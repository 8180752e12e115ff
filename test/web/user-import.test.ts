import { describe, expect, it } from 'vitest';
import { EMAIL_PATTERN as SERVICE_EMAIL_PATTERN } from '../../src/lib/email.js';
import { profileName, profilePicture } from '../../src/lib/profile.js';
import { FOREIGN_ALGORITHMS, PBKDF2_DIGESTS as SERVICE_DIGESTS, parseForeignHash, verifyForeignHash } from '../../src/security/foreign-passwords.js';
import { IMPORT_JOB_MAX_LINE_BYTES, IMPORT_JOB_MAX_LINES } from '../../src/services/users/user-import-job-service.js';
import {
  checkHashSettings, DEFAULT_HASH_SETTINGS, EMAIL_PATTERN, HASH_ALGORITHMS, hashProblems, MAX_IMPORT_ROWS, MAX_LINE_BYTES, parseFailureReport, parseImportFile,
  passwordRecord, PBKDF2_DIGESTS, prepareUpload, problemKind, type HashSettings, type ImportProblem,
} from '../../web/src/user-import.js';
import { FIREBASE_SAMPLE } from '../helpers/foreign-hashes.js';

/**
 * The console's import page reads files in the browser (web/src/user-import.ts, docs/web.md
 * "Importing users"): CSV and NDJSON to import items with the file's line numbers, the problems the
 * service would refuse, and bare password hashes turned into the records the service parses.
 */
const BCRYPT = '$2b$04$abcdefghijklmnopqrstuuQ1Lf3wl7o4DjlNIFdAb8RaZyRqnxF1y';
const codes = (problems: readonly ImportProblem[]) => problems.map((p) => [p.line, p.code, ...(p.value === undefined ? [] : [p.value])]);

describe('the import page\'s file reader', () => {
  it('keeps the service\'s limits, email rule, algorithms and digests', () => {
    expect(MAX_IMPORT_ROWS).toBe(IMPORT_JOB_MAX_LINES);
    expect(MAX_LINE_BYTES).toBe(IMPORT_JOB_MAX_LINE_BYTES);
    expect(EMAIL_PATTERN.source).toBe(SERVICE_EMAIL_PATTERN.source);
    expect([...HASH_ALGORITHMS].sort()).toEqual([...FOREIGN_ALGORITHMS].sort());
    expect([...PBKDF2_DIGESTS].sort()).toEqual([...SERVICE_DIGESTS].sort());
  });

  it('reads CSV with RFC 4180 quoting, a byte-order mark, CRLF and empty lines, numbering rows by the line they start on', () => {
    const csv = [
      '\uFEFFEmail,emailVerified,ROLE,passwordHash,customData,createdAt',
      `ann@example.com,TRUE,admin,${BCRYPT},"{""plan"":""pro""}",2020-01-02T03:04:05Z`,
      '',
      '"bob@example.com",no,,,"",',
      '"carol@example.com",yes,Member,,"{""note"":',
      '""two lines, and a comma""}",',
      'dave@example.com,,,,,',
    ].join('\r\n');
    const parsed = parseImportFile(csv);
    expect(parsed).toMatchObject({ format: 'csv', delimiter: ',', blocking: null, bareHashRows: 1, problems: [] });
    expect(parsed.rows).toEqual([
      { line: 2, item: { email: 'ann@example.com', emailVerified: true, role: 'Admin', customData: { plan: 'pro' }, createdAt: '2020-01-02T03:04:05Z' }, bareHash: { hash: BCRYPT } },
      { line: 4, item: { email: 'bob@example.com', emailVerified: false } },
      { line: 5, item: { email: 'carol@example.com', emailVerified: true, role: 'Member', customData: { note: 'two lines, and a comma' } } },
      { line: 7, item: { email: 'dave@example.com' } },
    ]);
  });

  it('reads name and picture columns and finds the ones the service refuses, by its own rules', () => {
    const csv = [
      'email,name,picture',
      'ann@example.com,Ann Lee,https://images.example.com/ann.png',
      'bob@example.com,,http://images.example.com/bob.png',
      `carol@example.com,${'c'.repeat(129)},"data:image/png;base64,AAAA"`,
      'dave@example.com,"Dave\nSmith",https://127.0.0.1/dave.png',
    ].join('\n');
    const parsed = parseImportFile(csv);
    expect(parsed.rows[0]!.item).toEqual({ email: 'ann@example.com', name: 'Ann Lee', picture: 'https://images.example.com/ann.png' });
    expect(codes(parsed.problems)).toEqual([
      [3, 'invalidPicture'],
      [4, 'invalidName'],
      [4, 'invalidPicture'],
      [5, 'invalidName'],
      [5, 'invalidPicture'],
    ]);
    // the page's judgement is the service's
    for (const row of parsed.rows) {
      const { name, picture } = row.item as { name?: string; picture?: string };
      const pageRefuses = parsed.problems.filter((p) => p.line === row.line).map((p) => p.code);
      if (name !== undefined) expect(profileName.safeParse(name).success).toBe(!pageRefuses.includes('invalidName'));
      if (picture !== undefined) expect(profilePicture.safeParse(picture).success).toBe(!pageRefuses.includes('invalidPicture'));
    }
  });

  it('finds the separator of the header row: semicolons (as spreadsheets write in German and French) and tabs', () => {
    const semicolons = parseImportFile('email;role;passwordHash;passwordSalt\nann@example.com;Member;aGFzaA==;"c2Fs;dA=="\n');
    expect(semicolons.delimiter).toBe(';');
    expect(semicolons.rows).toEqual([{ line: 2, item: { email: 'ann@example.com', role: 'Member' }, bareHash: { hash: 'aGFzaA==', salt: 'c2Fs;dA==' } }]);
    const tabs = parseImportFile('email\trole\nann@example.com\tAdmin\n');
    expect(tabs.delimiter).toBe('\t');
    expect(tabs.rows[0]!.item).toEqual({ email: 'ann@example.com', role: 'Admin' });
  });

  it('lists what the service would refuse by line, leaves out rows it cannot read, and names unknown columns', () => {
    const csv = [
      'email,role,emailVerified,nickname,totpSecret,createdAt,providerLinks',
      'ann@example.com,Member,true,Ann,,,',
      'not-an-address,Member,,,,,',
      'short,row',
      ',Admin,,,,,',
      'ANN@example.com,Owner,maybe,,abc,2999-01-01,[1]',
      'eve@example.com,,,,"JBSWY3DP EHPK3PXP",,"[{""issuer"":""https://idp.example.com"",""subject"":""42""}]"',
    ].join('\n');
    const parsed = parseImportFile(csv);
    expect(parsed.blocking).toBeNull();
    expect(codes(parsed.problems)).toEqual([
      [1, 'unknownColumn', 'nickname'],
      [3, 'invalidEmail', 'not-an-address'],
      [4, 'wrongFieldCount'],
      [5, 'missingEmail'],
      [6, 'duplicateEmail', '2'],
      [6, 'invalidRole', 'Owner'],
      [6, 'invalidEmailVerified', 'maybe'],
      [6, 'invalidTotpSecret'],
      [6, 'invalidCreatedAt', '2999-01-01'],
      [6, 'invalidProviderLinks'],
    ]);
    expect(parsed.problems.map((p) => problemKind(p.code))).toEqual(['note', 'warning', 'excluded', 'warning', 'note', 'warning', 'warning', 'warning', 'warning', 'warning']);
    // every readable row is sent, the refused ones too (the job's failure report names them); line 4 is left out
    expect(parsed.rows.map((r) => r.line)).toEqual([2, 3, 5, 6, 7]);
    expect(parsed.rows[3]!.item).toEqual({ email: 'ANN@example.com', role: 'Owner', emailVerified: 'maybe', totpSecret: 'abc', createdAt: '2999-01-01', providerLinks: [1] });
    expect(parsed.rows[4]!.item.providerLinks).toEqual([{ issuer: 'https://idp.example.com', subject: '42' }]);
  });

  it('refuses a file it cannot import as a whole: no email column, broken quoting, no row', () => {
    const noEmail = parseImportFile('mail,role\nann@example.com,Member\n');
    expect(noEmail.blocking).toEqual({ line: 1, code: 'noEmailColumn' });
    expect(problemKind(noEmail.blocking!.code)).toBe('blocking');
    const broken = parseImportFile('email,role\nann@example.com,Member\n"bob@example.com,Member\ncarol@example.com,Member\n');
    expect(broken.blocking).toEqual({ line: 3, code: 'brokenQuoting' });
    expect(broken.rows.map((r) => r.line)).toEqual([2]);
    // quotes inside an unquoted field are kept as they are
    expect(parseImportFile('email,role\nann"x"@example.com,Member\n').rows[0]!.item.email).toBe('ann"x"@example.com');
    expect(parseImportFile('email,role\n').blocking).toEqual({ line: 0, code: 'fileEmpty' });
    expect(parseImportFile('').blocking).toEqual({ line: 0, code: 'fileEmpty' });
    expect(parseImportFile('\n\n{"nope": 1\n').blocking).toEqual({ line: 0, code: 'fileEmpty' });
  });

  it('reads NDJSON: items as they are, bare hashes in their three forms, and lines that are no JSON object left out', () => {
    const lines = [
      JSON.stringify({ email: 'ann@example.com', password: { algorithm: 'bcrypt', hash: BCRYPT }, id: 'exported-id', status: 'Active' }),
      JSON.stringify({ email: 'bob@example.com', passwordHash: 'aGFzaA==', passwordSalt: 'c2FsdA==' }),
      '',
      JSON.stringify({ email: 'carol@example.com', password: BCRYPT }),
      JSON.stringify({ email: 'dave@example.com', password: { hash: 'aGFzaA==', salt: 'c2FsdA==' } }),
      '{"email": "eve@example.com"',
      '[1, 2]',
      JSON.stringify({ email: 'fay@example.com', password: { algorithm: 'md5', hash: 'x' } }),
    ];
    const parsed = parseImportFile(`\uFEFF${lines.join('\r\n')}\r\n`);
    expect(parsed.format).toBe('ndjson');
    expect(parsed.bareHashRows).toBe(3);
    expect(parsed.rows).toEqual([
      { line: 1, item: { email: 'ann@example.com', password: { algorithm: 'bcrypt', hash: BCRYPT }, id: 'exported-id', status: 'Active' } },
      { line: 2, item: { email: 'bob@example.com' }, bareHash: { hash: 'aGFzaA==', salt: 'c2FsdA==' } },
      { line: 4, item: { email: 'carol@example.com' }, bareHash: { hash: BCRYPT } },
      { line: 5, item: { email: 'dave@example.com' }, bareHash: { hash: 'aGFzaA==', salt: 'c2FsdA==' } },
      { line: 8, item: { email: 'fay@example.com', password: { algorithm: 'md5', hash: 'x' } } },
    ]);
    expect(codes(parsed.problems)).toEqual([[6, 'notJson'], [7, 'notObject'], [8, 'unknownAlgorithm', 'md5']]);
  });

  it('leaves out a user over the service\'s 16 KiB line', () => {
    const big = JSON.stringify({ email: 'big@example.com', customData: { text: 'é'.repeat(9000) } });
    const parsed = parseImportFile(`${JSON.stringify({ email: 'ann@example.com' })}\n${big}\n`);
    expect(codes(parsed.problems)).toEqual([[2, 'lineTooLong']]);
    expect(parsed.rows).toHaveLength(1);
  });

  it('checks the hash settings with the service\'s limits', () => {
    const rows = parseImportFile('email,passwordHash,passwordSalt\nann@example.com,aGFzaA==,c2FsdA==\n').rows;
    const settings = (changes: Partial<HashSettings>): HashSettings => ({ ...DEFAULT_HASH_SETTINGS, ...changes });
    expect(checkHashSettings(settings({}), rows)).toEqual({ algorithm: 'required' });
    expect(checkHashSettings(settings({ algorithm: 'bcrypt' }), rows)).toEqual({});
    expect(checkHashSettings(settings({ algorithm: 'scrypt' }), rows)).toEqual({});
    expect(checkHashSettings(settings({ algorithm: 'scrypt', N: '1000' }), rows)).toEqual({ N: 'powerOfTwo' });
    expect(checkHashSettings(settings({ algorithm: 'scrypt', N: '1048576', r: '8', p: '1' }), rows)).toEqual({ N: 'tooCostly' });
    expect(checkHashSettings(settings({ algorithm: 'scrypt', r: '', p: '1.5' }), rows)).toEqual({ r: 'required', p: 'integer' });
    expect(checkHashSettings(settings({ algorithm: 'firebase-scrypt' }), rows)).toEqual({ signerKey: 'required' });
    expect(checkHashSettings(settings({ algorithm: 'firebase-scrypt', signerKey: 'not base64!', memCost: '25' }), rows)).toEqual({ signerKey: 'base64', memCost: 'integer' });
    expect(checkHashSettings(settings({ algorithm: 'pbkdf2' }), rows)).toEqual({ iterations: 'required' });
    // Django's strings carry their iterations: none needed
    const django = parseImportFile('email,passwordHash\nann@example.com,pbkdf2_sha256$870000$salt$aGFzaA==\n').rows;
    expect(checkHashSettings(settings({ algorithm: 'pbkdf2' }), django)).toEqual({});
  });

  it('names the hashes that do not look like the chosen algorithm\'s or lack their salt', () => {
    const rows = parseImportFile(`email,passwordHash,passwordSalt\nann@example.com,${BCRYPT},\nbob@example.com,$argon2id$v=19$m=65536$x$y,\ncarol@example.com,aGFzaA==,c2FsdA==\n`).rows;
    expect(codes(hashProblems(rows, ''))).toEqual([]);
    expect(codes(hashProblems(rows, 'bcrypt'))).toEqual([[3, 'hashMismatch', 'bcrypt'], [4, 'hashMismatch', 'bcrypt']]);
    expect(codes(hashProblems(rows, 'scrypt'))).toEqual([[2, 'hashMismatch', 'scrypt'], [3, 'hashMismatch', 'scrypt']]);
    expect(codes(hashProblems(rows.slice(0, 1).map((r) => ({ ...r, bareHash: { hash: 'aGFzaA==' } })), 'firebase-scrypt'))).toEqual([[2, 'missingSalt', 'firebase-scrypt']]);
  });

  it('makes records the service parses, numbers as numbers, and a Firebase hash that verifies its password', async () => {
    const firebase = passwordRecord(
      { hash: FIREBASE_SAMPLE.hash, salt: FIREBASE_SAMPLE.salt },
      { ...DEFAULT_HASH_SETTINGS, algorithm: 'firebase-scrypt', signerKey: ` ${FIREBASE_SAMPLE.signerKey} `, saltSeparator: FIREBASE_SAMPLE.saltSeparator, rounds: '8', memCost: '14' },
    );
    expect(firebase).toEqual({ ...FIREBASE_SAMPLE });
    const parsed = parseForeignHash(firebase);
    expect(parsed.ok).toBe(true);
    expect(parsed.ok && (await verifyForeignHash(parsed.record, 'user1password'))).toBe(true);

    const scrypt = passwordRecord({ hash: 'aGFzaA==', salt: 'c2FsdA==' }, { ...DEFAULT_HASH_SETTINGS, algorithm: 'scrypt' });
    expect(scrypt).toEqual({ algorithm: 'scrypt', hash: 'aGFzaA==', salt: 'c2FsdA==', N: 16384, r: 8, p: 1 });
    expect(parseForeignHash(scrypt).ok).toBe(true);
    const explicit = passwordRecord({ hash: 'aGFzaA==', salt: 'c2FsdA==' }, { ...DEFAULT_HASH_SETTINGS, algorithm: 'pbkdf2', iterations: '10000', digest: 'sha512' });
    expect(explicit).toEqual({ algorithm: 'pbkdf2', hash: 'aGFzaA==', salt: 'c2FsdA==', iterations: 10000, digest: 'sha512' });
    expect(parseForeignHash(explicit).ok).toBe(true);
    const django = passwordRecord({ hash: 'pbkdf2_sha256$870000$salt$aGFzaA==', salt: 'ignored' }, { ...DEFAULT_HASH_SETTINGS, algorithm: 'pbkdf2' });
    expect(django).toEqual({ algorithm: 'pbkdf2', hash: 'pbkdf2_sha256$870000$salt$aGFzaA==' });
    expect(parseForeignHash(django).ok).toBe(true);
    expect(parseForeignHash(passwordRecord({ hash: BCRYPT }, { ...DEFAULT_HASH_SETTINGS, algorithm: 'bcrypt' })).ok).toBe(true);
  });

  it('prepares the NDJSON body with each line\'s line in the file, and reads the failure report by it', () => {
    const parsed = parseImportFile(`email,passwordHash\nann@example.com,${BCRYPT}\nshort\nnot-an-address,\ncarol@example.com,\n`);
    const upload = prepareUpload(parsed.rows, { ...DEFAULT_HASH_SETTINGS, algorithm: 'bcrypt' });
    expect(upload.lines.map((line) => JSON.parse(line))).toEqual([
      { email: 'ann@example.com', password: { algorithm: 'bcrypt', hash: BCRYPT } },
      { email: 'not-an-address' },
      { email: 'carol@example.com' },
    ]);
    expect(upload.fileLines).toEqual([2, 4, 5]);
    expect(upload.tooLong).toEqual([]);
    const failures = parseFailureReport('{"index":1,"reason":"invalid_email"}\n\nnot json\n');
    expect(failures).toEqual([{ index: 1, reason: 'invalid_email' }]);
    expect(upload.fileLines[failures[0]!.index]).toBe(4);
  });
});
