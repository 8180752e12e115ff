import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { unauthorized } from '../../lib/errors.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import type { AuditService } from '../audit/audit-service.js';
import type { EmailOtpService } from './email-otp-service.js';
import { isTotpEnrolled, type TotpService } from './totp-service.js';

/** Second-factor codes a login request may carry (docs/mfa.md). */
export interface LoginCodes {
  totpCode?: string | undefined;
  emailOtpCode?: string | undefined;
}

/** A second factor a user can complete a login with: `totp` or `email` (one-time code). */
export type SecondFactorMethod = 'totp' | 'email';

/**
 * Applies the tenant MFA policy at login (docs/mfa.md).
 * `Disabled`: password alone. `Optional`: users with TOTP enrolled must give a TOTP code.
 * `Required`: every user needs a second factor (TOTP, or the email code).
 */
export class MfaService {
  constructor(
    private readonly totp: TotpService,
    private readonly emailOtp: EmailOtpService,
    private readonly audit: AuditService,
  ) {}

  /** The factors a user must choose from at login under the tenant policy; empty when none is needed. */
  requiredMethods(tenant: Tenant, user: User): SecondFactorMethod[] {
    const enrolled = isTotpEnrolled(user);
    if (tenant.mfaPolicy === 'Disabled') return [];
    if (tenant.mfaPolicy === 'Optional') return enrolled ? ['totp'] : [];
    return enrolled ? ['totp', 'email'] : ['email', 'totp'];
  }

  /**
   * Called after the password was verified. Passes when no factor is required, or when a given
   * code of an allowed method is right (a TOTP code is tried first when both are given). A code
   * sent when no factor is required is ignored. A failed code is audited as `UserLoginFailed`.
   * @returns the factor that completed the login, or null when none was needed.
   * @throws ApiError 401 `mfa_required` (with `details.methods`) when a factor is needed and no code
   *   was given; 401 `invalid_mfa_code` when the code is wrong, used, expired or of a method the
   *   user cannot use.
   */
  async enforceAtLogin(em: EntityManager, tenant: Tenant, user: User, codes: LoginCodes, meta: RequestMeta): Promise<SecondFactorMethod | null> {
    const methods = this.requiredMethods(tenant, user);
    if (methods.length === 0) return null;
    if (!codes.totpCode && !codes.emailOtpCode) {
      throw unauthorized('mfa_required', 'A second factor is required', { methods });
    }
    if (codes.totpCode && methods.includes('totp') && (await this.totp.verifyLoginCode(em, tenant, user, codes.totpCode, meta))) {
      return 'totp';
    }
    if (codes.emailOtpCode && methods.includes('email') && (await this.emailOtp.verify(em, tenant, user, codes.emailOtpCode, meta))) {
      return 'email';
    }
    await this.audit.record(em, {
      tenantId: tenant.id,
      action: 'UserLoginFailed',
      actor: { type: 'user', id: user.id },
      target: { type: 'user', id: user.id },
      meta,
      details: { email: user.email, reason: 'invalid_mfa_code', methods },
    });
    throw unauthorized('invalid_mfa_code', 'The one-time code is not valid');
  }
}
