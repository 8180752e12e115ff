import type { EntityManager } from '@mikro-orm/postgresql';
import { Secret, TOTP } from 'otpauth';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { actingAs, withEm, type RequestScope, type TenantScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import type { AuditService } from '../audit/audit-service.js';
import type { FactorChangeNotifier } from './factor-change-notice.js';
import type { RecoveryCodeService } from './recovery-code-service.js';
import { acceptTotpStep, activatePendingTotp, clearTotp, findLiveUserById, setPendingTotpSecret } from '../../queries/user.js';
import { USER_ERRORS } from '../../errors/user.js';
import { MFA_ERRORS } from '../../errors/mfa.js';

/** RFC 6238 parameters (docs/mfa.md): HMAC-SHA-1, 6 digits, 30-second step, ±1 step accepted. */
export const TOTP_ALGORITHM = 'SHA1';
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_WINDOW_STEPS = 1;
/** Bytes of a generated shared secret (160 bits, RFC 4226 §4's recommended length). */
export const TOTP_SECRET_BYTES = 20;

/** What an enroll step hands out: the base32 shared secret and its `otpauth://totp/...` URI. */
export interface TotpEnrollment {
  secret: string;
  otpauthUri: string;
}

/** Associated data binding a TOTP secret ciphertext (active or pending) to its user. */
export function totpSecretAad(userId: string): string {
  return `totp:${userId}`;
}

/** True when the user has an active (verified) TOTP factor. */
export function isTotpEnrolled(user: User): boolean {
  return user.totpSecretEnc !== null && user.totpEnrolledAt !== null;
}

/**
 * RFC 6238 TOTP second factor: enrollment (pending secret, then activation by a first code), code
 * checks at login with replay protection, and removal by an admin. Secrets are stored only as
 * keyring ciphertexts (`app_user.totp_secret_enc`, `totp_pending_secret_enc`).
 * Enrolment and removal take the request scope and audit with its actor; a sign-in's code check
 * audits as the user it checks (actingAs).
 */
export class TotpService {
  constructor(
    private readonly keyring: Keyring,
    private readonly audit: AuditService,
    private readonly notices: FactorChangeNotifier,
    private readonly recoveryCodes: RecoveryCodeService,
  ) {}

  /**
   * Generates a new secret and keeps it, encrypted, as the user's pending secret (replacing any
   * earlier pending one); the active factor is untouched until {@link confirmEnrollment}.
   * The otpauth URI carries the tenant name as issuer and `issuer:email` as account label.
   * @throws ApiError 403 `mfa_disabled` when the tenant policy is `Disabled`, 409
   *   `totp_already_enrolled` when the user already has an active factor.
   */
  async startEnrollment(em: EntityManager, tenant: Tenant, user: User): Promise<TotpEnrollment> {
    this.assertEnrollable(tenant, user);
    const secret = new Secret({ size: TOTP_SECRET_BYTES });
    const pending = this.keyring.encrypt(secret.base32, totpSecretAad(user.id));
    await setPendingTotpSecret(em, tenant.id, user.id, pending);
    const otpauthUri = this.totpFor(secret, tenant, user).toString();
    return { secret: secret.base32, otpauthUri };
  }

  /**
   * Activates the pending secret when `code` matches it (±1 step). The step used is remembered, so
   * the same code cannot also complete a login. Replaces the user's recovery codes with a new set
   * (docs/mfa.md "Recovery codes"), in the same transaction. Audits `MfaTotpEnrolled` and mails the
   * user the factor-change notice.
   * @returns the new recovery codes in plaintext, to be shown once.
   * @throws ApiError 403 `mfa_disabled`, 409 `totp_already_enrolled`, 409 `totp_enrollment_not_started`
   *   (no pending secret), 401 `invalid_mfa_code`.
   */
  async confirmEnrollment(scope: RequestScope, user: User, code: string): Promise<string[]> {
    const { em, tenant } = scope;
    this.assertEnrollable(tenant, user);
    const pending = user.totpPendingSecretEnc;
    if (!pending) throw MFA_ERRORS.totpEnrollmentNotStarted();
    const step = this.matchingStep(this.keyring.decrypt(pending, totpSecretAad(user.id)), code);
    if (step === null) throw MFA_ERRORS.invalidMfaCode();
    const now = new Date();
    // Conditional on the pending secret still being the one checked, so two concurrent
    // verifications (or a concurrent re-enroll) cannot both activate.
    const recoveryCodes = await em.transactional(async (tx) => {
      if (!(await activatePendingTotp(tx, tenant.id, user.id, pending, step, now))) throw MFA_ERRORS.totpEnrollmentChanged();
      const codes = await this.recoveryCodes.replace(tx, tenant.id, user.id);
      await this.audit.record(withEm(scope, tx), {
        action: 'MfaTotpEnrolled',
        target: { type: 'user', id: user.id },
      });
      await this.notices.notify(withEm(scope, tx), user, 'totp_enrolled');
      return codes;
    });
    return recoveryCodes;
  }

  /**
   * Checks a login code against the user's active secret: accepted within ±1 step, and only for a
   * step later than the last one accepted for this user (a code is accepted once). Audits
   * `MfaTotpVerified` on success.
   * @returns false when the user has no active factor, the code is wrong, or it was already used.
   */
  async verifyLoginCode(scope: TenantScope, user: User, code: string): Promise<boolean> {
    const { em, tenant } = scope;
    if (!isTotpEnrolled(user)) return false;
    const step = this.matchingStep(this.keyring.decrypt(user.totpSecretEnc!, totpSecretAad(user.id)), code);
    if (step === null) return false;
    if (!(await acceptTotpStep(em, tenant.id, user.id, step))) return false;
    await this.audit.record(actingAs(scope, user.id), {
      action: 'MfaTotpVerified',
      target: { type: 'user', id: user.id },
    });
    return true;
  }

  /**
   * Removes a user's TOTP factor, active and pending, and its recovery codes (admin route
   * `users/{userId}/totp/disable`).
   * Idempotent: a user without a factor also answers normally. Audits `MfaTotpDisabled` with
   * `details.wasEnrolled`; when an active factor was removed, mails the user the factor-change notice.
   * @throws ApiError 404 when the user is not a live user of the tenant.
   */
  async disable(scope: RequestScope, userId: string): Promise<void> {
    const { em, tenant } = scope;
    const user = UUID_PATTERN.test(userId)
      ? await findLiveUserById(em, tenant.id, userId)
      : null;
    if (!user) throw USER_ERRORS.userNotFound();
    await em.transactional(async (tx) => {
      await clearTotp(tx, tenant.id, user.id);
      await this.recoveryCodes.deleteAll(tx, tenant.id, user.id);
      await this.audit.record(withEm(scope, tx), {
        action: 'MfaTotpDisabled',
        target: { type: 'user', id: user.id },
        details: { wasEnrolled: isTotpEnrolled(user) },
      });
      if (isTotpEnrolled(user)) await this.notices.notify(withEm(scope, tx), user, 'totp_disabled');
    });
  }

  /**
   * Checks that the user may enrol a factor now.
   * @throws ApiError 403 `mfa_disabled` when the tenant policy is `Disabled`, 409 `totp_already_enrolled`.
   */
  assertEnrollable(tenant: Tenant, user: User): void {
    if (tenant.mfaPolicy === 'Disabled') throw MFA_ERRORS.mfaDisabled();
    if (isTotpEnrolled(user)) throw MFA_ERRORS.totpAlreadyEnrolled();
  }

  private totpFor(secret: Secret, tenant: Tenant, user: User): TOTP {
    return new TOTP({
      issuer: tenant.name,
      label: user.email,
      secret,
      algorithm: TOTP_ALGORITHM,
      digits: TOTP_DIGITS,
      period: TOTP_PERIOD_SECONDS,
    });
  }

  /** The RFC 6238 time step `code` belongs to (now ±1), or null when it matches none. */
  private matchingStep(base32Secret: string, code: string): number | null {
    const totp = new TOTP({
      secret: Secret.fromBase32(base32Secret),
      algorithm: TOTP_ALGORITHM,
      digits: TOTP_DIGITS,
      period: TOTP_PERIOD_SECONDS,
    });
    const timestamp = Date.now();
    const delta = totp.validate({ token: code, timestamp, window: TOTP_WINDOW_STEPS });
    return delta === null ? null : totp.counter({ timestamp }) + delta;
  }
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
