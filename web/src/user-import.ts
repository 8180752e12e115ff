import { parse as parseCsv } from 'csv-parse/browser/esm/sync';
import type { ForeignAlgorithm, Pbkdf2Digest } from '../../src/security/foreign-passwords.js';
import type { ImportLineReason } from '../../src/services/users/user-import-job-service.js';
import { PROFILE_NAME_FORBIDDEN, PROFILE_NAME_MAX, PROFILE_PICTURE_MAX, PROFILE_PICTURE_PATTERN } from '../../src/lib/profile-rules.js';

/**
 * The console's "Import users" page reads a file in the browser (docs/web.md "Importing users",
 * docs/import.md): a CSV file (a header row naming the fields of an import item) or an NDJSON file
 * (one import item a line, as POST users/import-jobs takes it). This module turns the file into the
 * NDJSON body of POST users/import-jobs and finds, before anything is sent, what the service will
 * refuse; it has no React and no network, so it is tested on its own (test/web/user-import.test.ts).
 *
 * Rows the page cannot read (a CSV record with the wrong number of fields, a line that is no JSON
 * object, a line over the service's 16 KiB) are left out of the upload and listed; every other row is
 * sent as it is, even one the page expects the service to refuse (its problem is listed, and the
 * job's failure report then names it). A file whose CSV quoting breaks, that has no `email` column,
 * no row or more rows than a job takes is not uploaded at all.
 */

/** The algorithms of `password.algorithm` (docs/import.md "Password hashes"); the Record makes the compiler reject a missing or unknown one. */
const ALGORITHM_SET: Record<ForeignAlgorithm, true> = { bcrypt: true, argon2: true, scrypt: true, 'firebase-scrypt': true, pbkdf2: true };
export const HASH_ALGORITHMS = Object.keys(ALGORITHM_SET) as ForeignAlgorithm[];
const DIGEST_SET: Record<Pbkdf2Digest, true> = { sha256: true, sha1: true, sha512: true };
/** The digests of PBKDF2's explicit form. */
export const PBKDF2_DIGESTS = Object.keys(DIGEST_SET) as Pbkdf2Digest[];

/** Most lines one import job takes (`IMPORT_JOB_MAX_LINES` of the service; the unit test compares them). */
export const MAX_IMPORT_ROWS = 1_000_000;
/** Longest line the service takes, in bytes (`IMPORT_JOB_MAX_LINE_BYTES`). */
export const MAX_LINE_BYTES = 16 * 1024;
/** Largest file the page reads (it holds the file in memory); larger files go through the API (docs/import.md). */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** Rows the preview shows. */
export const PREVIEW_ROWS = 10;

/**
 * The service's email rule (`EMAIL_PATTERN` of src/lib/email.ts, which the unit test compares it
 * with; repeated here so that the page's bundle does not take in the server's validation library).
 */
export const EMAIL_PATTERN =
  /^(?=[^@]{1,64}@)(?!\.)(?!.*\.\.)[A-Za-z0-9_'+\-.]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
const ROLES = ['Member', 'Admin'] as const;
/** The TOTP secret rule of the import (base32, 16 to 128 characters once spaces and `=` are dropped). */
const BASE32_SECRET = /^[A-Z2-7]{16,128}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DJANGO_PBKDF2 = /^pbkdf2_(sha1|sha256)\$/;

/** The CSV columns the page reads: the fields of an import item, and a bare password hash with its salt. */
export const CSV_COLUMNS = ['email', 'emailVerified', 'role', 'passwordHash', 'passwordSalt', 'totpSecret', 'createdAt', 'customData', 'providerLinks', 'name', 'picture'] as const;
type CsvColumn = (typeof CSV_COLUMNS)[number];

/** What the page found in a file; `line` is the 1-based line of the file (0 for the file as a whole). */
export type ProblemCode =
  // the file is not uploaded
  | 'fileEmpty' | 'noEmailColumn' | 'brokenQuoting' | 'tooManyRows'
  // a note: a column is ignored
  | 'unknownColumn' | 'duplicateColumn'
  // the row is left out of the upload
  | 'wrongFieldCount' | 'notJson' | 'notObject' | 'lineTooLong'
  // the row is sent; the service is expected to refuse it (or, for a repeated address, skip it: a note)
  | 'missingEmail' | 'invalidEmail' | 'duplicateEmail' | 'invalidRole' | 'invalidEmailVerified' | 'unknownAlgorithm' | 'missingHash'
  | 'hashMismatch' | 'missingSalt' | 'invalidTotpSecret' | 'invalidCreatedAt' | 'invalidCustomData' | 'invalidProviderLinks' | 'invalidName' | 'invalidPicture';

/** Problems that stop the whole upload. */
const BLOCKING: ReadonlySet<ProblemCode> = new Set(['fileEmpty', 'noEmailColumn', 'brokenQuoting', 'tooManyRows']);
/** Problems whose row is left out of the upload. */
const EXCLUDING: ReadonlySet<ProblemCode> = new Set(['wrongFieldCount', 'notJson', 'notObject', 'lineTooLong']);
/** Notes: an ignored column, an address met earlier in the file (the service skips it, as it skips addresses already in the workspace). */
const NOTES: ReadonlySet<ProblemCode> = new Set(['unknownColumn', 'duplicateColumn', 'duplicateEmail']);

export interface ImportProblem {
  line: number;
  code: ProblemCode;
  /** What the message names: a column, a value, the line of the first occurrence, an algorithm. */
  value?: string;
}

/**
 * How a problem affects the upload: `blocking` stops the file, `excluded` leaves its row out, `note`
 * changes nothing the service would refuse, `warning` marks a row the service will most likely refuse.
 */
export function problemKind(code: ProblemCode): 'blocking' | 'excluded' | 'note' | 'warning' {
  return BLOCKING.has(code) ? 'blocking' : EXCLUDING.has(code) ? 'excluded' : NOTES.has(code) ? 'note' : 'warning';
}

/** One readable row: its import item as it will be sent, and a password hash without its algorithm. */
export interface ImportRow {
  /** The line of the file where the row starts (1-based). */
  line: number;
  item: Record<string, unknown>;
  /** A hash the page's algorithm and parameters apply to (CSV `passwordHash`, NDJSON `passwordHash` or a `password` without `algorithm`). */
  bareHash?: { hash: string; salt?: string };
}

export interface ParsedImportFile {
  format: 'csv' | 'ndjson';
  /** The CSV field separator found in the header row. */
  delimiter?: ',' | ';' | '\t';
  rows: ImportRow[];
  /** Problems of the file and its rows that do not depend on the hash settings, by line. */
  problems: ImportProblem[];
  /** The first problem that stops the upload, if any. */
  blocking: ImportProblem | null;
  /** How many rows carry a bare hash (the page then asks for the algorithm). */
  bareHashRows: number;
}

/** Byte length of a string in UTF-8, computed only when it could be over `limit`. */
function overBytes(text: string, limit: number): boolean {
  if (text.length * 3 <= limit) return false;
  return new TextEncoder().encode(text).length > limit;
}

/** The field separator of a CSV header row: the most frequent of `,` `;` and tab outside quotes (`,` by default). */
function detectDelimiter(text: string): ',' | ';' | '\t' {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && char in counts) counts[char as keyof typeof counts] += 1;
  }
  const best = (Object.entries(counts) as [',' | ';' | '\t', number][]).sort((a, b) => b[1] - a[1])[0]!;
  return best[1] > 0 ? best[0] : ',';
}

/**
 * Line numbers of CSV records, from the byte offsets csv-parse reports (`info.bytes`, where a record
 * ends): the line of the first byte after the previous record that is no line break (empty lines are
 * skipped). A line break is LF, CRLF or a lone CR, inside quoted fields too.
 */
function lineCounter(bytes: Uint8Array) {
  let cursor = 0;
  let line = 1;
  const advance = (to: number) => {
    for (; cursor < to && cursor < bytes.length; cursor++) {
      const byte = bytes[cursor];
      if (byte === 0x0a || (byte === 0x0d && bytes[cursor + 1] !== 0x0a)) line += 1;
    }
  };
  /** The line the next record starts on; moves past it to `end` (its end offset) when given. */
  return (end?: number): number => {
    while (cursor < bytes.length && (bytes[cursor] === 0x0a || bytes[cursor] === 0x0d)) advance(cursor + 1);
    const start = line;
    if (end !== undefined) advance(end);
    return start;
  };
}

const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

/** Checks of a row's fields, shared by both formats; pushes its problems. */
function checkItem(row: ImportRow, problems: ImportProblem[], seen: Map<string, number>): void {
  const { item, line } = row;
  const email = item.email;
  if (email === undefined || email === null || email === '') problems.push({ line, code: 'missingEmail' });
  else if (typeof email !== 'string' || email.length > 254 || !EMAIL_PATTERN.test(email.trim())) problems.push({ line, code: 'invalidEmail', value: String(email) });
  else {
    const key = email.trim().toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, line);
    else problems.push({ line, code: 'duplicateEmail', value: String(first) });
  }
  if (item.role !== undefined && !(ROLES as readonly unknown[]).includes(item.role)) problems.push({ line, code: 'invalidRole', value: String(item.role) });
  if (item.emailVerified !== undefined && typeof item.emailVerified !== 'boolean') problems.push({ line, code: 'invalidEmailVerified', value: String(item.emailVerified) });
  const password = item.password;
  if (password !== undefined && password !== null && !row.bareHash) {
    const record = password as { algorithm?: unknown; hash?: unknown };
    if (!(HASH_ALGORITHMS as readonly unknown[]).includes(record.algorithm)) problems.push({ line, code: 'unknownAlgorithm', value: String(record.algorithm) });
    else if (typeof record.hash !== 'string' || record.hash === '') problems.push({ line, code: 'missingHash' });
  }
  if (item.totpSecret !== undefined && item.totpSecret !== null) {
    const secret = typeof item.totpSecret === 'string' ? item.totpSecret.replace(/[\s=]/g, '').toUpperCase() : '';
    if (!BASE32_SECRET.test(secret)) problems.push({ line, code: 'invalidTotpSecret' });
  }
  if (item.createdAt !== undefined && item.createdAt !== null) {
    const at = typeof item.createdAt === 'string' ? new Date(item.createdAt).getTime() : Number.NaN;
    if (Number.isNaN(at) || at < 0 || at > Date.now()) problems.push({ line, code: 'invalidCreatedAt', value: String(item.createdAt) });
  }
  const customData = item.customData;
  if (customData !== undefined && customData !== null && (typeof customData !== 'object' || Array.isArray(customData))) problems.push({ line, code: 'invalidCustomData' });
  const links = item.providerLinks;
  if (links !== undefined && links !== null && (!Array.isArray(links) || links.some((l) => typeof l !== 'object' || l === null || typeof (l as { issuer?: unknown }).issuer !== 'string' || typeof (l as { subject?: unknown }).subject !== 'string'))) {
    problems.push({ line, code: 'invalidProviderLinks' });
  }
  // the rules of PATCH me (src/lib/profile-rules.ts), as the service applies them to an import
  const name = item.name;
  if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > PROFILE_NAME_MAX || PROFILE_NAME_FORBIDDEN.test(name) || name.trim() === '')) {
    problems.push({ line, code: 'invalidName' });
  }
  const picture = item.picture;
  if (picture !== undefined && picture !== null && (typeof picture !== 'string' || picture.length > PROFILE_PICTURE_MAX || !PROFILE_PICTURE_PATTERN.test(picture))) {
    problems.push({ line, code: 'invalidPicture' });
  }
}

/** A JSON value typed in a CSV cell (`customData`, `providerLinks`), or the text itself when it is no JSON (the service then refuses it). */
function jsonCell(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A CSV row as an import item: empty cells are left out, `emailVerified` and `role` read leniently. */
function csvItem(values: Partial<Record<CsvColumn, string>>): { item: Record<string, unknown>; bareHash?: { hash: string; salt?: string } } {
  const item: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(values) as [CsvColumn, string][]) {
    if (value === '') continue;
    switch (column) {
      case 'emailVerified': {
        const word = value.toLowerCase();
        item.emailVerified = TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : value;
        break;
      }
      case 'role':
        item.role = ROLES.find((role) => role.toLowerCase() === value.toLowerCase()) ?? value;
        break;
      case 'customData':
      case 'providerLinks':
        item[column] = jsonCell(value);
        break;
      case 'passwordHash':
      case 'passwordSalt':
        break;
      default:
        item[column] = value;
    }
  }
  const hash = values.passwordHash;
  if (!hash) return { item };
  return { item, bareHash: values.passwordSalt !== undefined && values.passwordSalt !== '' ? { hash, salt: values.passwordSalt } : { hash } };
}

function parseCsvFile(text: string): ParsedImportFile {
  const source = text.replace(/^\uFEFF/, '');
  const delimiter = detectDelimiter(source);
  const bytes = new TextEncoder().encode(source);
  const nextLine = lineCounter(bytes);
  const problems: ImportProblem[] = [];
  // set by the parser's callback: the first record whose quoting broke
  const quoting: { broken: ImportProblem | null } = { broken: null };
  const records = parseCsv(bytes, {
    delimiter, skip_empty_lines: true, relax_quotes: true, skip_records_with_error: true,
    // the parser's context tells the offset a record ends at (its `info` option would copy it into every record, at twice the cost)
    on_record: (fields, context) => ({ fields, line: nextLine((context as unknown as { bytes: number }).bytes) }) as unknown as string[],
    on_skip: (err) => {
      // a record of its own with too few or too many fields is left out; broken quoting makes every record after it unreliable
      if (err?.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH') problems.push({ line: nextLine(Number(err.bytes)), code: 'wrongFieldCount' });
      else quoting.broken ??= { line: nextLine(), code: 'brokenQuoting' };
      return undefined;
    },
  }) as unknown as { fields: string[]; line: number }[];
  const header = records.shift();
  if (!header) return { format: 'csv', delimiter, rows: [], problems: [{ line: 0, code: 'fileEmpty' }], blocking: { line: 0, code: 'fileEmpty' }, bareHashRows: 0 };
  const columns: (CsvColumn | null)[] = [];
  for (const name of header.fields.map((cell) => cell.trim())) {
    const column = CSV_COLUMNS.find((known) => known.toLowerCase() === name.toLowerCase()) ?? null;
    if (column && columns.includes(column)) problems.push({ line: 1, code: 'duplicateColumn', value: name });
    else if (!column && name !== '') problems.push({ line: 1, code: 'unknownColumn', value: name });
    columns.push(column && !columns.includes(column) ? column : null);
  }
  const rows: ImportRow[] = [];
  const seen = new Map<string, number>();
  let bareHashRows = 0;
  for (const { fields: record, line } of records) {
    const values: Partial<Record<CsvColumn, string>> = {};
    columns.forEach((column, index) => {
      if (column) values[column] = (record[index] ?? '').trim();
    });
    const row: ImportRow = { line, ...csvItem(values) };
    if (overBytes(JSON.stringify(row.item), MAX_LINE_BYTES)) {
      problems.push({ line, code: 'lineTooLong' });
      continue;
    }
    if (row.bareHash) bareHashRows += 1;
    checkItem(row, problems, seen);
    rows.push(row);
  }
  problems.sort((a, b) => a.line - b.line);
  const blocking: ImportProblem | null = !columns.includes('email')
    ? { line: 1, code: 'noEmailColumn' }
    : quoting.broken ?? emptyOrTooMany(rows);
  if (blocking && !problems.includes(blocking)) problems.unshift(blocking);
  return { format: 'csv', delimiter, rows, problems, blocking, bareHashRows };
}

/** A file without any row to send, or with more than a job takes. */
function emptyOrTooMany(rows: readonly ImportRow[]): ImportProblem | null {
  if (rows.length === 0) return { line: 0, code: 'fileEmpty' };
  return rows.length > MAX_IMPORT_ROWS ? { line: 0, code: 'tooManyRows', value: String(rows.length) } : null;
}

/** An NDJSON row's bare hash: top-level `passwordHash` (and `passwordSalt`), or a `password` string or object without `algorithm`. */
function ndjsonItem(object: Record<string, unknown>): { item: Record<string, unknown>; bareHash?: { hash: string; salt?: string } } {
  const without = (...keys: string[]): Record<string, unknown> => Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
  const { passwordHash, passwordSalt, password } = object;
  if (typeof passwordHash === 'string' && passwordHash !== '' && password === undefined) {
    return { item: without('passwordHash', 'passwordSalt'), bareHash: typeof passwordSalt === 'string' ? { hash: passwordHash, salt: passwordSalt } : { hash: passwordHash } };
  }
  if (typeof password === 'string' && password !== '') return { item: without('password'), bareHash: { hash: password } };
  if (typeof password === 'object' && password !== null && !Array.isArray(password) && (password as { algorithm?: unknown }).algorithm === undefined) {
    const { hash, salt } = password as { hash?: unknown; salt?: unknown };
    if (typeof hash === 'string' && hash !== '') return { item: without('password'), bareHash: typeof salt === 'string' ? { hash, salt } : { hash } };
  }
  return { item: object };
}

function parseNdjsonFile(text: string): ParsedImportFile {
  const problems: ImportProblem[] = [];
  const rows: ImportRow[] = [];
  const seen = new Map<string, number>();
  let bareHashRows = 0;
  let lineNo = 0;
  for (const text_ of text.replace(/^\uFEFF/, '').split('\n')) {
    lineNo += 1;
    const lineText = text_.replace(/\r$/, '');
    if (lineText.trim() === '') continue;
    if (overBytes(lineText, MAX_LINE_BYTES)) {
      problems.push({ line: lineNo, code: 'lineTooLong' });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(lineText);
    } catch {
      problems.push({ line: lineNo, code: 'notJson' });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push({ line: lineNo, code: 'notObject' });
      continue;
    }
    const row: ImportRow = { line: lineNo, ...ndjsonItem(value as Record<string, unknown>) };
    if (row.bareHash) bareHashRows += 1;
    checkItem(row, problems, seen);
    rows.push(row);
  }
  const blocking = emptyOrTooMany(rows);
  if (blocking) problems.unshift(blocking);
  return { format: 'ndjson', rows, problems, blocking, bareHashRows };
}

/**
 * Reads a file's text: NDJSON when its first character (after a byte-order mark and white space) is
 * `{`, else CSV with the field separator of its header row (`,`, `;` or tab; RFC 4180 quoting by
 * csv-parse, quotes inside an unquoted field kept as they are).
 */
export function parseImportFile(text: string): ParsedImportFile {
  return /^\uFEFF?\s*\{/.test(text) ? parseNdjsonFile(text) : parseCsvFile(text);
}

/** The algorithm and parameters the page applies to every bare hash (form values, as typed). */
export interface HashSettings {
  algorithm: ForeignAlgorithm | '';
  /** scrypt: cost (a power of two), block size, parallelism. */
  N: string;
  r: string;
  p: string;
  /** Firebase: the project's "password hash parameters". */
  signerKey: string;
  saltSeparator: string;
  rounds: string;
  memCost: string;
  /** PBKDF2's explicit form (not needed for Django's `pbkdf2_sha256$…` strings). */
  iterations: string;
  digest: Pbkdf2Digest;
}

/** The settings a page starts with: no algorithm, and the usual defaults of each one's parameters (Firebase's: rounds 8, memCost 14). */
export const DEFAULT_HASH_SETTINGS: HashSettings = {
  algorithm: '', N: '16384', r: '8', p: '1', signerKey: '', saltSeparator: 'Bw==', rounds: '8', memCost: '14', iterations: '', digest: 'sha256',
};

export type HashSettingField = Exclude<keyof HashSettings, 'digest'>;
/** Why a setting was refused: the page says it beside the field. */
export type HashSettingProblem = 'required' | 'integer' | 'powerOfTwo' | 'base64' | 'tooCostly';

/** Most memory one scrypt verification may use (the service's limit, docs/import.md "Limits"): 128·N·r·p bytes. */
const SCRYPT_MAX_MEMORY = 256 * 1024 * 1024;

function integerIn(text: string, min: number, max: number): number | undefined {
  if (!/^\d+$/.test(text.trim())) return undefined;
  const value = Number(text.trim());
  return value >= min && value <= max ? value : undefined;
}

/** Whether any bare hash of the rows is not in Django's PBKDF2 form, so PBKDF2 needs its iterations and digest. */
export function needsPbkdf2Parameters(rows: readonly ImportRow[]): boolean {
  return rows.some((row) => row.bareHash && !DJANGO_PBKDF2.test(row.bareHash.hash));
}

/**
 * Checks the settings for the chosen algorithm, with the service's limits (docs/import.md "Limits").
 * @returns the problem of each refused field (empty when all are fine).
 */
export function checkHashSettings(settings: HashSettings, rows: readonly ImportRow[]): Partial<Record<HashSettingField, HashSettingProblem>> {
  const problems: Partial<Record<HashSettingField, HashSettingProblem>> = {};
  const range = (field: HashSettingField, min: number, max: number): number | undefined => {
    const value = integerIn(settings[field], min, max);
    if (value === undefined) problems[field] = settings[field].trim() === '' ? 'required' : 'integer';
    return value;
  };
  switch (settings.algorithm) {
    case '':
      problems.algorithm = 'required';
      break;
    case 'scrypt': {
      const N = range('N', 2, 2 ** 24);
      const r = range('r', 1, 64);
      const p = range('p', 1, 64);
      if (N !== undefined && (N & (N - 1)) !== 0) problems.N = 'powerOfTwo';
      else if (N !== undefined && r !== undefined && p !== undefined && 128 * N * r * p > SCRYPT_MAX_MEMORY) problems.N = 'tooCostly';
      break;
    }
    case 'firebase-scrypt': {
      if (settings.signerKey.trim() === '') problems.signerKey = 'required';
      else if (!BASE64.test(settings.signerKey.trim())) problems.signerKey = 'base64';
      if (settings.saltSeparator.trim() !== '' && !BASE64.test(settings.saltSeparator.trim())) problems.saltSeparator = 'base64';
      const rounds = range('rounds', 1, 64);
      const memCost = range('memCost', 1, 24);
      if (rounds !== undefined && memCost !== undefined && 128 * 2 ** memCost * rounds > SCRYPT_MAX_MEMORY) problems.memCost = 'tooCostly';
      break;
    }
    case 'pbkdf2':
      if (needsPbkdf2Parameters(rows)) range('iterations', 1, 5_000_000);
      break;
    default:
      break;
  }
  return problems;
}

/** The `password` of a bare hash under the settings (which {@link checkHashSettings} accepted); numbers as numbers. */
export function passwordRecord(bare: { hash: string; salt?: string }, settings: HashSettings): Record<string, unknown> {
  const { hash, salt } = bare;
  const withSalt = salt === undefined ? {} : { salt };
  switch (settings.algorithm) {
    case 'scrypt':
      return { algorithm: 'scrypt', hash, ...withSalt, N: Number(settings.N), r: Number(settings.r), p: Number(settings.p) };
    case 'firebase-scrypt':
      return {
        algorithm: 'firebase-scrypt', hash, ...withSalt, signerKey: settings.signerKey.trim(), saltSeparator: settings.saltSeparator.trim(),
        rounds: Number(settings.rounds), memCost: Number(settings.memCost),
      };
    case 'pbkdf2':
      return DJANGO_PBKDF2.test(hash) ? { algorithm: 'pbkdf2', hash } : { algorithm: 'pbkdf2', hash, ...withSalt, iterations: Number(settings.iterations), digest: settings.digest };
    default:
      return { algorithm: settings.algorithm, hash };
  }
}

/** The bare hashes that do not look like the chosen algorithm's, or lack the salt it needs (by line). */
export function hashProblems(rows: readonly ImportRow[], algorithm: ForeignAlgorithm | ''): ImportProblem[] {
  if (algorithm === '') return [];
  const problems: ImportProblem[] = [];
  for (const row of rows) {
    if (!row.bareHash) continue;
    const { hash, salt } = row.bareHash;
    const looksRight =
      algorithm === 'bcrypt' ? /^\$2[aby]\$\d\d\$/.test(hash)
        : algorithm === 'argon2' ? /^\$argon2(id|i|d)\$/.test(hash)
          : algorithm === 'pbkdf2' ? DJANGO_PBKDF2.test(hash) || BASE64.test(hash)
            : BASE64.test(hash);
    if (!looksRight) problems.push({ line: row.line, code: 'hashMismatch', value: algorithm });
    else if (salt === undefined && (algorithm === 'scrypt' || algorithm === 'firebase-scrypt' || (algorithm === 'pbkdf2' && !DJANGO_PBKDF2.test(hash)))) {
      problems.push({ line: row.line, code: 'missingSalt', value: algorithm });
    }
  }
  return problems;
}

/** The body of POST users/import-jobs, and for each of its lines the file's line (to read the failure report by). */
export interface PreparedUpload {
  lines: string[];
  fileLines: number[];
  /** Rows whose line, with its password parameters, is over the service's limit: left out. */
  tooLong: ImportProblem[];
}

/** Turns the rows into NDJSON lines, the settings applied to every bare hash. */
export function prepareUpload(rows: readonly ImportRow[], settings: HashSettings): PreparedUpload {
  const lines: string[] = [];
  const fileLines: number[] = [];
  const tooLong: ImportProblem[] = [];
  for (const row of rows) {
    const item = row.bareHash ? { ...row.item, password: passwordRecord(row.bareHash, settings) } : row.item;
    const line = JSON.stringify(item);
    if (overBytes(line, MAX_LINE_BYTES)) {
      tooLong.push({ line: row.line, code: 'lineTooLong' });
      continue;
    }
    lines.push(line);
    fileLines.push(row.line);
  }
  return { lines, fileLines, tooLong };
}

/** One line of a job's failure report (GET users/import-jobs/{id}/errors). */
export interface ImportFailure {
  /** The position among the uploaded lines, from 0. */
  index: number;
  reason: ImportLineReason;
}

/** Reads a failure report's NDJSON (lines that are no `{index, reason}` are passed over). */
export function parseFailureReport(text: string): ImportFailure[] {
  const failures: ImportFailure[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value = JSON.parse(line) as { index?: unknown; reason?: unknown };
      if (typeof value.index === 'number' && typeof value.reason === 'string') failures.push({ index: value.index, reason: value.reason as ImportLineReason });
    } catch {
      // not a line of the report
    }
  }
  return failures;
}
