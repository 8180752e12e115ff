import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { actingAs, type TenantScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import type { EmailOtpService } from './email-otp-service.js';
import type { RecoveryCodeService } from './recovery-code-service.js';
import { isTotpEnrolled, type TotpService } from './totp-service.js';
import { MFA_ERRORS } from '../../errors/mfa.js';

/** Second-factor codes a login request may carry (docs/mfa.md). */
export interface LoginCodes {
  totpCode?: string | undefined;
  emailOtpCode?: string | undefined;
  /** A TOTP recovery code, accepted wherever a TOTP code is (docs/mfa.md "Recovery codes"). */
  recoveryCode?: string | undefined;
}

/** A second factor a user can complete a login with: `totp` or `email` (one-time code). */
export type SecondFactorMethod = 'totp' | 'email';

/** What completed a second-factor step: a method, or a recovery code standing in for TOTP. */
export type AcceptedFactor = SecondFactorMethod | 'recovery_code';

/** The `method` suffix of a sign-in completed by `factor` (`totp`, `email_otp`, `recovery_code`). */
export function factorMethodName(factor: AcceptedFactor): string {
  return factor === 'email' ? 'email_otp' : factor;
}

/**
 * Applies the tenant MFA policy at login (docs/mfa.md).
 * `Disabled`: password alone. `Optional`: users with TOTP enrolled must give a TOTP code.
 * `Required`: every user needs a second factor: a user with TOTP enrolled gives a TOTP code (no
 * email fallback, so a stolen mailbox plus password is not enough); the others the email code.
 * Its steps take the request's scope first (TenantScope: the workspace and the request metadata) and
 * audit as the user they identified (actingAs), or as `system` when nobody is identified (asSystem).
 */
export class MfaService {
  constructor(
    private readonly totp: TotpService,
    private readonly emailOtp: EmailOtpService,
    private readonly audit: AuditService,
    private readonly recoveryCodes: RecoveryCodeService,
  ) {}

  /**
   * The factors a user must choose from at login under the tenant policy; empty when none is needed.
   * A TOTP-enrolled user is offered TOTP only; under `Required` a user without TOTP is offered the
   * email code and TOTP (the latter meaning enrolment through `auth/totp/initial-*`).
   */
  requiredMethods(tenant: Tenant, user: User): SecondFactorMethod[] {
    const enrolled = isTotpEnrolled(user);
    if (tenant.mfaPolicy === 'Disabled') return [];
    if (enrolled) return ['totp'];
    return tenant.mfaPolicy === 'Required' ? ['email', 'totp'] : [];
  }

  /**
   * The factors that can complete a sign-in that already proved the first factor without a password
   * (a provider sign-in, `auth/mfa/complete`): TOTP when enrolled, else the email code; empty when
   * the policy needs no second factor for this user.
   */
  completionMethods(tenant: Tenant, user: User): SecondFactorMethod[] {
    const methods = this.requiredMethods(tenant, user);
    if (methods.length === 0) return [];
    return isTotpEnrolled(user) ? ['totp'] : ['email'];
  }

  /**
   * Checks one second-factor code against the methods allowed: a TOTP code first, then a recovery
   * code (only where TOTP is allowed and enrolled), then an email code. Audits `MfaTotpVerified` /
   * `MfaRecoveryCodeUsed` / `MfaEmailOtpVerified` / `MfaEmailOtpFailed` through the factor
   * services; the caller audits the failed sign-in.
   * @returns what accepted a code, or null when nothing did.
   */
  async verifyAnyCode(
    scope: TenantScope, user: User, methods: SecondFactorMethod[], codes: LoginCodes,
  ): Promise<AcceptedFactor | null> {
    if (codes.totpCode && methods.includes('totp') && (await this.totp.verifyLoginCode(scope, user, codes.totpCode))) {
      return 'totp';
    }
    if (
      codes.recoveryCode &&
      methods.includes('totp') &&
      isTotpEnrolled(user) &&
      (await this.recoveryCodes.consume(scope, user, codes.recoveryCode))
    ) {
      return 'recovery_code';
    }
    if (codes.emailOtpCode && methods.includes('email') && (await this.emailOtp.verify(scope, user, codes.emailOtpCode))) {
      return 'email';
    }
    return null;
  }

  /**
   * Called after the password was verified. Passes when no factor is required, or when a given
   * code of an allowed method is right (TOTP, then recovery code, then email code). A code
   * sent when no factor is required is ignored. A failed code is audited as `UserLoginFailed`.
   * @returns what completed the login, or null when nothing was needed.
   * @throws ApiError 401 `mfa_required` (with `details.methods`) when a factor is needed and no code
   *   was given; 401 `invalid_mfa_code` when the code is wrong, used, expired or of a method the
   *   user cannot use.
   */
  async enforceAtLogin(scope: TenantScope, user: User, codes: LoginCodes): Promise<AcceptedFactor | null> {
    const { tenant } = scope;
    const methods = this.requiredMethods(tenant, user);
    if (methods.length === 0) return null;
    if (!codes.totpCode && !codes.emailOtpCode && !codes.recoveryCode) {
      throw MFA_ERRORS.mfaRequired({ methods });
    }
    const accepted = await this.verifyAnyCode(scope, user, methods, codes);
    if (accepted) return accepted;
    await this.recordFailedCode(scope, user, methods);
    throw MFA_ERRORS.invalidMfaCode();
  }

  /** Audits a sign-in step refused for a wrong second-factor code as `UserLoginFailed` (`invalid_mfa_code`). */
  async recordFailedCode(scope: TenantScope, user: User, methods: SecondFactorMethod[], extra: Record<string, unknown> = {}): Promise<void> {
    await this.audit.record(actingAs(scope, user.id), {
      action: 'UserLoginFailed',
      target: { type: 'user', id: user.id },
      details: { email: user.email, reason: 'invalid_mfa_code', methods, ...extra },
    });
  }
}
