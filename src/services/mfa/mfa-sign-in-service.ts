import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Tenant } from '../../entities/tenant.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import type { AuthService, SignIn } from '../sign-in/auth-service.js';
import type { EmailOtpService } from './email-otp-service.js';
import type { MfaService } from './mfa-service.js';
import type { TotpEnrollment, TotpService } from './totp-service.js';

/**
 * The MFA steps that happen before a session exists (SPEC.md part 4): asking for an email code,
 * and the two-step TOTP enrollment of a user who has no factor yet, authenticated by password.
 */
export class MfaSignInService {
  constructor(
    private readonly auth: AuthService,
    private readonly mfa: MfaService,
    private readonly totp: TotpService,
    private readonly emailOtp: EmailOtpService,
    private readonly logger: Logger,
  ) {}

  /**
   * `auth/request-email-otp`: mails a new code to a live, active user for whom the email factor is
   * one of the login methods (policy `Required`). Without `password` the answer is the same whether
   * or not the account exists, and nothing is sent for unknown, suspended or pending accounts or
   * when the policy does not use the email factor. With `password` the credentials are checked first.
   * @throws ApiError 401 `invalid_credentials` / `user_suspended` / `email_not_verified` (only when a
   *   password is given).
   */
  async requestEmailOtp(em: EntityManager, tenant: Tenant, email: string, password: string | undefined, meta: RequestMeta): Promise<void> {
    const user =
      password === undefined
        ? await this.auth.findLiveUserByEmail(em, tenant.id, email)
        : await this.auth.verifySignInCredentials(em, tenant, email, password, meta);
    if (!user || user.status !== 'Active') return;
    if (!this.mfa.requiredMethods(tenant, user).includes('email')) {
      this.logger.debug({ tenantId: tenant.id, userId: user.id }, 'email code not sent: the email factor is not used under this policy');
      return;
    }
    await this.emailOtp.send(em, tenant, user, meta);
  }

  /**
   * `auth/totp/initial-enroll`: step 1 of TOTP enrollment for a user signing in with a password.
   * @throws ApiError 401 (credentials), 403 `mfa_disabled`, 409 `totp_already_enrolled`.
   */
  async totpInitialEnroll(em: EntityManager, tenant: Tenant, email: string, password: string, meta: RequestMeta): Promise<TotpEnrollment> {
    const user = await this.auth.verifySignInCredentials(em, tenant, email, password, meta);
    return this.totp.startEnrollment(em, tenant, user);
  }

  /**
   * `auth/totp/initial-verify`: step 2; activates the factor with a first code and signs the user in
   * (the activating code counts as the second factor). Audits `MfaTotpEnrolled` and `UserLogin`
   * (`details.method` `password+totp`).
   * @throws ApiError 401 (credentials) or `invalid_mfa_code`, 403 `mfa_disabled`, 409
   *   `totp_already_enrolled` / `totp_enrollment_not_started`.
   */
  async totpInitialVerify(em: EntityManager, tenant: Tenant, email: string, password: string, code: string, meta: RequestMeta): Promise<SignIn> {
    const user = await this.auth.verifySignInCredentials(em, tenant, email, password, meta);
    await this.totp.confirmEnrollment(em, tenant, user, code, { type: 'user', id: user.id }, meta);
    const tokens = await this.auth.completeSignIn(em, tenant, user, 'password+totp', meta);
    return { user, tokens };
  }
}
