import { randomInt, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { User } from '../../entities/user.js';
import { actingAs, type TenantScope } from '../../lib/request-scope.js';
import { sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import type { FactorChangeNotifier } from './factor-change-notice.js';
import { countUnusedRecoveryCodes, deleteRecoveryCodesOfUser, insertRecoveryCodes, useRecoveryCode } from '../../queries/recovery-code.js';

/** Recovery codes handed out per set (docs/mfa.md "Recovery codes"). */
export const RECOVERY_CODE_COUNT = 10;
/** Characters of one code, from the RFC 4648 base32 alphabet: 12 × 5 = 60 bits of entropy. */
export const RECOVERY_CODE_LENGTH = 12;
/** Characters per group when a code is shown (`ABCD-EFGH-IJKL`). */
export const RECOVERY_CODE_GROUP = 4;
/** The RFC 4648 base32 alphabet: no 0/1/8/9, so codes read back unambiguously. */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const CODE_PATTERN = new RegExp(`^[${ALPHABET}]{${RECOVERY_CODE_LENGTH}}$`);

/**
 * The stored form of a code: lower-case hex SHA-256 of `tenantId:userId:CODE`. A code carries 60
 * random bits, so a fast hash is enough against guessing; the tenant and user in the input salt it,
 * so one precomputation cannot attack every user's codes at once (docs/decisions.md "Recovery codes and the session list").
 */
export function recoveryCodeHash(tenantId: string, userId: string, normalizedCode: string): string {
  return sha256Hex(`${tenantId}:${userId}:${normalizedCode}`);
}

/**
 * A code as typed by a person, normalised: upper-cased, spaces and dashes removed.
 * @returns the normalised code, or null when it cannot be a recovery code.
 */
export function normalizeRecoveryCode(input: string): string | null {
  const code = input.replace(/[\s-]/g, '').toUpperCase();
  return CODE_PATTERN.test(code) ? code : null;
}

/** A new random code, shown grouped (`ABCD-EFGH-IJKL`); drawn with a CSPRNG, no modulo bias. */
function newCode(): string {
  let code = '';
  for (let i = 0; i < RECOVERY_CODE_LENGTH; i++) {
    if (i > 0 && i % RECOVERY_CODE_GROUP === 0) code += '-';
    code += ALPHABET[randomInt(ALPHABET.length)];
  }
  return code;
}

/**
 * Single-use TOTP recovery codes (docs/mfa.md "Recovery codes"): a set of
 * {@link RECOVERY_CODE_COUNT} is issued when TOTP is activated and on regeneration, each stored only
 * as {@link recoveryCodeHash} in `mfa_recovery_code` (tenant + user scoped); one code replaces a TOTP
 * code at sign-in once.
 */
export class RecoveryCodeService {
  constructor(
    private readonly audit: AuditService,
    private readonly notices: FactorChangeNotifier,
  ) {}

  /**
   * Replaces the user's codes with a new set (the old ones stop working at once). Call inside the
   * transaction that activates TOTP or regenerates.
   * @returns the plaintext codes, grouped `ABCD-EFGH-IJKL`; shown once, never stored.
   */
  async replace(em: EntityManager, tenantId: string, userId: string): Promise<string[]> {
    const codes = new Set<string>();
    while (codes.size < RECOVERY_CODE_COUNT) codes.add(newCode());
    const now = new Date();
    const plain = [...codes];
    await deleteRecoveryCodesOfUser(em, tenantId, userId);
    await insertRecoveryCodes(
      em, tenantId, userId,
      plain.map((code) => ({ id: randomUUID(), codeHash: recoveryCodeHash(tenantId, userId, normalizeRecoveryCode(code)!) })),
      now,
    );
    return plain;
  }

  /** Deletes every code of the user (TOTP removed). */
  async deleteAll(em: EntityManager, tenantId: string, userId: string): Promise<void> {
    await deleteRecoveryCodesOfUser(em, tenantId, userId);
  }

  /** How many unused codes the user has left (0 when none were ever issued). */
  async remaining(em: EntityManager, tenantId: string, userId: string): Promise<number> {
    return countUnusedRecoveryCodes(em, tenantId, userId);
  }

  /**
   * Spends one code at sign-in. The look-up is by hash (no secret compared in JavaScript), and the
   * conditional UPDATE (`used_at is null`) lets exactly one of two concurrent sign-ins with the same
   * code succeed. On success audits `MfaRecoveryCodeUsed` (`details.remaining`) and mails the user.
   * The caller checks that the user has TOTP enrolled, and audits a failed sign-in.
   * @returns true when the code was an unused code of this user.
   */
  async consume(scope: TenantScope, user: User, presented: string): Promise<boolean> {
    const { em, tenant } = scope;
    const code = normalizeRecoveryCode(presented);
    if (code === null) return false;
    if (!(await useRecoveryCode(em, tenant.id, user.id, recoveryCodeHash(tenant.id, user.id, code), new Date()))) return false;
    const remaining = await this.remaining(em, tenant.id, user.id);
    await this.audit.record(actingAs(scope, user.id), {
      action: 'MfaRecoveryCodeUsed',
      target: { type: 'user', id: user.id },
      details: { remaining },
    });
    await this.notices.notifyRecoveryCodeUsed(em, tenant, user, remaining);
    return true;
  }
}
