import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IdpIdentity } from '../../entities/idp.js';
import type { Tenant } from '../../entities/tenant.js';
import { newUser } from '../../entities/new-user.js';
import { USER_ROLES, type User, type UserRole } from '../../entities/user.js';
import { profileName, profilePicture } from '../../lib/profile.js';
import { EMAIL_PATTERN, normalizeEmail } from '../../lib/email.js';
import { withEm, type AuditScope, type RequestScope } from '../../lib/request-scope.js';
import { parseForeignHash, storeForeignHash } from '../../security/foreign-passwords.js';
import type { Keyring } from '../../security/keyring.js';
import type { AuditService } from '../audit/audit-service.js';
import { findLinkedProviderAccounts, findProviderAccountsOfUsers, insertIdentitiesUnlessTaken, type ProviderAccount } from '../../queries/idp-identity.js';
import { totpSecretAad } from '../mfa/totp-service.js';
import { CUSTOM_DATA_MAX_BYTES } from './user-administration-service.js';
import { findLiveEmails, findUserExportBatch, insertUsersUnlessTaken, type ExportedUserRow, type UserExportKeyset } from '../../queries/user.js';

/** Most users one `POST users/import` takes (docs/import.md). */
export const IMPORT_MAX_USERS = 1000;

/**
 * Why one user of an import was not created (`errors[].reason`, docs/import.md): the address is no
 * valid email, the role is not one of the service's, the password's algorithm is not supported or
 * its hash or parameters are malformed, the TOTP secret is no base32 secret of 80 to 640 bits, the
 * name or picture breaks the rules of PATCH me (lib/profile.ts).
 */
export const IMPORT_USER_REASONS = [
  'invalid_email', 'invalid_role', 'unsupported_algorithm', 'malformed_hash', 'invalid_totp_secret', 'invalid_custom_data', 'invalid_created_at',
  'invalid_provider_link', 'provider_link_taken', 'invalid_user', 'invalid_name', 'invalid_picture',
] as const;
export type ImportUserReason = (typeof IMPORT_USER_REASONS)[number];

/** One user to import, as the contract spells it; unchecked (each field is validated per user). */
export interface ImportUserInput {
  email?: unknown;
  emailVerified?: unknown;
  role?: unknown;
  /** `{algorithm, hash, ...params}` (security/foreign-passwords.ts). */
  password?: unknown;
  /** The user's RFC 6238 secret, base32, so their authenticator keeps working. */
  totpSecret?: unknown;
  /** A JSON object of at most CUSTOM_DATA_MAX_BYTES, the user's `customData`. */
  customData?: unknown;
  /** When the account was created in the old system (ISO 8601, not in the future). */
  createdAt?: unknown;
  /** The user's accounts at external providers, `[{issuer, subject}]`, so provider sign-in finds them again. */
  providerLinks?: unknown;
  /** The display name (lib/profile.ts `profileName`). */
  name?: unknown;
  /** The picture URL (lib/profile.ts `profilePicture`). */
  picture?: unknown;
}

/** Most provider links one imported user may carry. */
export const IMPORT_MAX_PROVIDER_LINKS = 10;

/** A user checked for import: its row and its provider links. */
interface PreparedUser {
  user: User;
  links: ProviderAccount[];
}

/** The provider accounts of one user, deduplicated, or undefined when malformed. */
function parseProviderLinks(value: unknown): ProviderAccount[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > IMPORT_MAX_PROVIDER_LINKS) return undefined;
  const links = new Map<string, ProviderAccount>();
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) return undefined;
    const { issuer, subject } = item as { issuer?: unknown; subject?: unknown };
    if (typeof issuer !== 'string' || issuer.length === 0 || issuer.length > 512 || !URL.canParse(issuer)) return undefined;
    if (typeof subject !== 'string' || subject.length === 0 || subject.length > 255) return undefined;
    links.set(providerAccountKey({ issuer, subject }), { issuer, subject });
  }
  return [...links.values()];
}

/** One key per provider account. */
function providerAccountKey(account: ProviderAccount): string {
  return `${account.issuer}\n${account.subject}`;
}

/** The outcome of one import (a request, or a job's chunk): counts and per-user errors by index. */
export interface ImportOutcome {
  created: number;
  skipped: number;
  errors: { index: number; reason: ImportUserReason }[];
}

/** Where the users of an import came from, kept in the audit event's `details.via`. */
export type ImportVia = 'request' | 'job';

/** Users read per statement by the export: the memory an export holds at once, whatever its size. */
export const USER_EXPORT_BATCH_ROWS = 1000;

/** One line of GET users/export (docs/import.md "Export"): no password hash, no secret. */
export interface ExportedUser {
  id: string;
  email: string;
  emailVerified: boolean;
  role: UserRole;
  status: ExportedUserRow['status'];
  createdAt: string;
  lastLoginAt: string | null;
  totpEnrolled: boolean;
  locale: string | null;
  importedAt: string | null;
  /** The tenant's own JSON object about the user (as `customData` of the import). */
  customData: Record<string, unknown>;
  /** The user's accounts at external providers and SSO connections (as `providerLinks` of the import). */
  providerLinks: ProviderAccount[];
  /** The display name; null when not set. */
  name: string | null;
  /** The picture URL; null when not set. */
  picture: string | null;
}

/** Where an export is written; `write` resolves when the next chunk may follow (backpressure). */
export interface UserExportSink {
  write(chunk: string): Promise<void>;
}

const BASE32_SECRET = /^[A-Z2-7]{16,128}$/;

/**
 * Moving users in and out (docs/import.md): imports with their existing password hashes (verified
 * and replaced by argon2id at their next sign-in, security/passwords.ts), and the NDJSON export.
 */
export class UserImportService {
  constructor(
    private readonly audit: AuditService,
    private readonly keyring: Keyring,
  ) {}

  /**
   * Checks one user and builds its row: the address normalised, `Active` when the address is
   * verified or the tenant does not require verification (else `Pending`), the role (default
   * `Member`), the password hash's stored record, the TOTP secret encrypted as an enrolled factor,
   * `importedAt` = `now`, the old system's creation time, custom data, name and picture where given,
   * and its provider links.
   * @returns the row and its links, or the reason the user cannot be imported.
   */
  private prepare(tenant: Tenant, input: unknown, now: Date): PreparedUser | ImportUserReason {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'invalid_user';
    const fields = input as ImportUserInput;
    if (typeof fields.email !== 'string' || fields.email.length > 254 || !EMAIL_PATTERN.test(fields.email.trim())) return 'invalid_email';
    if (fields.role !== undefined && !(USER_ROLES as readonly unknown[]).includes(fields.role)) return 'invalid_role';
    if (fields.emailVerified !== undefined && typeof fields.emailVerified !== 'boolean') return 'invalid_user';
    let passwordHash: string | null = null;
    if (fields.password !== undefined && fields.password !== null) {
      const parsed = parseForeignHash(fields.password);
      if (!parsed.ok) return parsed.reason;
      passwordHash = storeForeignHash(parsed.record);
    }
    let totpSecret: string | null = null;
    if (fields.totpSecret !== undefined && fields.totpSecret !== null) {
      if (typeof fields.totpSecret !== 'string') return 'invalid_totp_secret';
      totpSecret = fields.totpSecret.replace(/[\s=]/g, '').toUpperCase();
      if (!BASE32_SECRET.test(totpSecret)) return 'invalid_totp_secret';
    }
    let customData: Record<string, unknown> = {};
    if (fields.customData !== undefined && fields.customData !== null) {
      if (typeof fields.customData !== 'object' || Array.isArray(fields.customData)) return 'invalid_custom_data';
      if (Buffer.byteLength(JSON.stringify(fields.customData), 'utf8') > CUSTOM_DATA_MAX_BYTES) return 'invalid_custom_data';
      customData = fields.customData as Record<string, unknown>;
    }
    let createdAt = now;
    if (fields.createdAt !== undefined && fields.createdAt !== null) {
      const parsed = typeof fields.createdAt === 'string' ? new Date(fields.createdAt) : undefined;
      if (!parsed || Number.isNaN(parsed.getTime()) || parsed.getTime() > now.getTime() || parsed.getTime() < 0) return 'invalid_created_at';
      createdAt = parsed;
    }
    const links = parseProviderLinks(fields.providerLinks);
    if (!links) return 'invalid_provider_link';
    const name = fields.name === undefined || fields.name === null ? { success: true as const, data: null } : profileName.safeParse(fields.name);
    if (!name.success) return 'invalid_name';
    const picture = fields.picture === undefined || fields.picture === null ? { success: true as const, data: null } : profilePicture.safeParse(fields.picture);
    if (!picture.success) return 'invalid_picture';
    const verified = fields.emailVerified === true;
    const user = newUser(
      {
        tenantId: tenant.id,
        email: normalizeEmail(fields.email),
        passwordHash,
        status: verified || !tenant.requireEmailVerification ? 'Active' : 'Pending',
        role: (fields.role as UserRole | undefined) ?? 'Member',
        emailVerifiedAt: verified ? now : null,
        importedAt: now,
        name: name.data,
        picture: picture.data,
      },
      now,
    );
    user.createdAt = createdAt;
    user.customData = customData;
    if (totpSecret) {
      user.totpSecretEnc = this.keyring.encrypt(totpSecret, totpSecretAad(user.id));
      user.totpEnrolledAt = now;
    }
    return { user, links };
  }

  /**
   * Creates the users of one batch in the caller's transaction: invalid users are errors by their
   * index (`firstIndex` + position), an address already in the tenant (or earlier in the batch) is
   * skipped, never overwritten; a user whose provider account another user already holds (in the
   * tenant, or earlier in the batch) is the error `provider_link_taken`. Links the created users to
   * their provider accounts. Writes no audit event (the caller writes one per import).
   */
  async importBatch(tx: EntityManager, tenant: Tenant, users: readonly unknown[], firstIndex = 0, now = new Date()): Promise<ImportOutcome> {
    const errors: ImportOutcome['errors'] = [];
    const candidates: (PreparedUser & { index: number })[] = [];
    const seen = new Set<string>();
    let skipped = 0;
    users.forEach((input, position) => {
      const prepared = this.prepare(tenant, input, now);
      if (typeof prepared === 'string') {
        errors.push({ index: firstIndex + position, reason: prepared });
      } else if (seen.has(prepared.user.email)) {
        skipped += 1;
      } else {
        seen.add(prepared.user.email);
        candidates.push({ ...prepared, index: firstIndex + position });
      }
    });
    // an address already present is skipped before its links are looked at: a re-import of an export
    // (whose links the present users hold already) skips, it does not fail
    const present = await findLiveEmails(tx, tenant.id, candidates.map((c) => c.user.email));
    const linked = await findLinkedProviderAccounts(tx, tenant.id, candidates.filter((c) => !present.has(c.user.email)).flatMap((c) => c.links));
    const rows: PreparedUser[] = [];
    for (const candidate of candidates) {
      if (present.has(candidate.user.email)) {
        skipped += 1;
        continue;
      }
      const keys = candidate.links.map(providerAccountKey);
      if (keys.some((key) => linked.has(key))) {
        errors.push({ index: candidate.index, reason: 'provider_link_taken' });
        continue;
      }
      keys.forEach((key) => linked.add(key));
      rows.push(candidate);
    }
    const inserted = await insertUsersUnlessTaken(tx, rows.map((r) => r.user));
    const identities: IdpIdentity[] = rows
      .filter((r) => inserted.has(r.user.id))
      .flatMap(({ user, links }) => links.map((link) => ({
        id: randomUUID(), tenantId: tenant.id, userId: user.id, issuer: link.issuer, subject: link.subject, email: user.email, createdAt: now, lastLoginAt: null,
      })));
    await insertIdentitiesUnlessTaken(tx, identities);
    errors.sort((a, b) => a.index - b.index);
    return { created: inserted.size, skipped: skipped + rows.length - inserted.size, errors };
  }

  /**
   * POST users/import (docs/import.md): at most {@link IMPORT_MAX_USERS} users (the router's schema
   * enforces it), in one transaction with one `UsersImported` audit event holding the counts.
   * @returns created and skipped counts and the per-user errors by index.
   */
  async importUsers(scope: RequestScope, users: readonly unknown[]): Promise<ImportOutcome> {
    return scope.em.transactional(async (tx) => {
      const outcome = await this.importBatch(tx, scope.tenant, users);
      await this.recordImport(withEm(scope, tx), 'request', { total: users.length, created: outcome.created, skipped: outcome.skipped, failed: outcome.errors.length });
      return outcome;
    });
  }

  /**
   * Writes the one `UsersImported` event of an import, with its counts (never an address or a hash),
   * with the scope's entity manager (the import's transaction), actor and metadata: the request's for
   * POST users/import, the uploader with no request metadata for a job.
   */
  async recordImport(
    scope: AuditScope, via: ImportVia, counts: { total: number; created: number; skipped: number; failed: number }, jobId?: string,
  ): Promise<void> {
    await this.audit.record(scope, {
      action: 'UsersImported', target: { type: 'tenant', id: scope.tenant.id }, details: { via, ...counts, ...(jobId ? { jobId } : {}) },
    });
  }

  /**
   * GET users/export (docs/import.md "Export"): every live user of the tenant, oldest first, one
   * JSON object a line (NDJSON), read {@link USER_EXPORT_BATCH_ROWS} at a time and written before the
   * next batch is read. No password hash, no TOTP secret.
   * @returns how many users were written.
   */
  async exportUsers(em: EntityManager, tenantId: string, sink: UserExportSink, batchRows = USER_EXPORT_BATCH_ROWS): Promise<number> {
    let after: UserExportKeyset | null = null;
    let count = 0;
    for (;;) {
      const batch = await findUserExportBatch(em, tenantId, after, batchRows);
      if (batch.rows.length === 0) break;
      const links = await findProviderAccountsOfUsers(em, tenantId, batch.rows.map((row) => row.id));
      await sink.write(batch.rows.map((row) => `${JSON.stringify(toExportedUser(row, links.get(row.id) ?? []))}\n`).join(''));
      count += batch.rows.length;
      after = batch.next;
      if (batch.rows.length < batchRows) break;
    }
    return count;
  }
}

function toExportedUser(row: ExportedUserRow, providerLinks: ProviderAccount[]): ExportedUser {
  return {
    id: row.id,
    email: row.email,
    emailVerified: row.emailVerifiedAt !== null,
    role: row.role,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    lastLoginAt: row.lastLoginAt?.toISOString() ?? null,
    totpEnrolled: row.totpEnrolledAt !== null,
    locale: row.locale,
    importedAt: row.importedAt?.toISOString() ?? null,
    customData: row.customData,
    providerLinks,
    name: row.name,
    picture: row.picture,
  };
}
