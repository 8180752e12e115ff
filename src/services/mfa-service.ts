import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../entities/tenant.js';
import type { User } from '../entities/user.js';
import { unauthorized } from '../lib/errors.js';
import type { RequestMeta } from '../lib/request-meta.js';

/** Second-factor codes a login request may carry (SPEC.md part 4 "Login rules"). */
export interface LoginCodes {
  totpCode?: string | undefined;
  emailOtpCode?: string | undefined;
}

/** A second factor a user can complete a login with: `totp` or `email` (one-time code). */
export type SecondFactorMethod = 'totp' | 'email';

/**
 * Applies the tenant MFA policy at login (CONTRACT.md "MFA").
 * `Disabled`: password alone. `Optional`: users with TOTP enrolled must give a code.
 * `Required`: every user needs a second factor (TOTP, or the email code).
 */
export class MfaService {
  /** The factors a user must choose from at login under the tenant policy; empty when none is needed. */
  requiredMethods(tenant: Tenant, user: User): SecondFactorMethod[] {
    const enrolled = user.totpSecretEnc !== null && user.totpEnrolledAt !== null;
    if (tenant.mfaPolicy === 'Disabled') return [];
    if (tenant.mfaPolicy === 'Optional') return enrolled ? ['totp'] : [];
    return enrolled ? ['totp', 'email'] : ['email', 'totp'];
  }

  /**
   * Called after the password was verified. Passes when no factor is required or a given code is
   * right.
   * @throws ApiError 401 `mfa_required` (with `details.methods`) when a factor is needed and no code
   *   was given; 401 `invalid_mfa_code` when a code is wrong.
   */
  async enforceAtLogin(_em: EntityManager, tenant: Tenant, user: User, codes: LoginCodes, _meta: RequestMeta): Promise<void> {
    const methods = this.requiredMethods(tenant, user);
    if (methods.length === 0) return;
    if (!codes.totpCode && !codes.emailOtpCode) {
      throw unauthorized('mfa_required', 'A second factor is required', { methods });
    }
    throw unauthorized('invalid_mfa_code', 'The one-time code is not valid');
  }
}
