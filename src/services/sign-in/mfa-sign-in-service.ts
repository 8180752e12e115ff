import type { Logger } from 'pino';
import type { User } from '../../entities/user.js';
import { actingAs, type TenantScope } from '../../lib/request-scope.js';
import type { PasswordSignInService, SignIn } from './password-sign-in-service.js';
import type { EmailOtpService } from '../mfa/email-otp-service.js';
import type { MfaService } from '../mfa/mfa-service.js';
import type { TotpEnrollment, TotpService } from '../mfa/totp-service.js';
import { findLiveUserByEmail } from '../../queries/user.js';
import { MFA_ERRORS } from '../../errors/mfa.js';

/**
 * The MFA steps that happen before a session exists (docs/mfa.md): asking for an email code,
 * and the two-step TOTP enrollment of a user who has no factor yet, authenticated by password.
 * Its steps take the request's scope first (TenantScope: the workspace and the request metadata) and
 * audit as the user they identified (actingAs), or as `system` when nobody is identified (asSystem).
 */
export class MfaSignInService {
  constructor(
    private readonly auth: PasswordSignInService,
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
  async requestEmailOtp(scope: TenantScope, email: string, password: string | undefined): Promise<void> {
    const { em, tenant } = scope;
    const user =
      password === undefined
        ? await findLiveUserByEmail(em, tenant.id, email)
        : await this.auth.verifySignInCredentials(scope, email, password);
    if (!user || user.status !== 'Active') return;
    if (!this.mfa.requiredMethods(tenant, user).includes('email')) {
      this.logger.debug({ tenantId: tenant.id, userId: user.id }, 'email code not sent: the email factor is not used under this policy');
      return;
    }
    await this.emailOtp.send(scope, user);
  }

  /**
   * `auth/totp/initial-enroll`: step 1 of TOTP enrollment for a user signing in with a password.
   * Under `Required` the password alone never enrols a factor: a valid `emailOtpCode` (from
   * `auth/request-email-otp`) proves the mailbox too; it stays open so the same code also serves
   * step 2 (docs/mfa.md "Bootstrap under Required").
   * @throws ApiError 401 (credentials), 401 `mfa_required` (`details.methods: ["email"]`) or
   *   `invalid_mfa_code`, 403 `mfa_disabled`, 409 `totp_already_enrolled`.
   */
  async totpInitialEnroll(
    scope: TenantScope, email: string, password: string, emailOtpCode: string | undefined,
  ): Promise<TotpEnrollment> {
    const { em, tenant } = scope;
    const user = await this.auth.verifySignInCredentials(scope, email, password);
    this.totp.assertEnrollable(tenant, user);
    await this.proveMailbox(scope, user, emailOtpCode, { keep: true });
    return this.totp.startEnrollment(em, tenant, user);
  }

  /**
   * `auth/totp/initial-verify`: step 2; activates the factor with a first code and signs the user in
   * (the activating code counts as the second factor). Under `Required` the email code of step 1
   * is needed again; it is spent once the factor is active. Audits `MfaTotpEnrolled` and `UserLogin`
   * (`details.method` `password+totp`) and mails the factor-change notice.
   * @returns the sign-in and the user's first recovery codes (docs/mfa.md "Recovery codes"), shown once.
   * @throws ApiError 401 (credentials), `mfa_required` (`details.methods: ["email"]`) or
   *   `invalid_mfa_code`, 403 `mfa_disabled`, 409 `totp_already_enrolled` / `totp_enrollment_not_started`.
   */
  async totpInitialVerify(
    scope: TenantScope, email: string, password: string, code: string, emailOtpCode: string | undefined,
  ): Promise<SignIn & { recoveryCodes: string[] }> {
    const { em, tenant } = scope;
    const user = await this.auth.verifySignInCredentials(scope, email, password);
    this.totp.assertEnrollable(tenant, user);
    await this.proveMailbox(scope, user, emailOtpCode, { keep: true });
    const recoveryCodes = await this.totp.confirmEnrollment(actingAs(scope, user.id), user, code);
    if (tenant.mfaPolicy === 'Required') await this.emailOtp.discard(em, tenant, user);
    const tokens = await this.auth.completeSignIn(scope, user, 'password+totp');
    return { user, tokens, recoveryCodes };
  }

  /**
   * Under `Required`, checks the email code that proves the user also holds the mailbox; other
   * policies need nothing here. A wrong code is audited as `UserLoginFailed`.
   * @throws ApiError 401 `mfa_required` (`details.methods: ["email"]`) without a code, 401
   *   `invalid_mfa_code` for a wrong, used or expired one.
   */
  private async proveMailbox(
    scope: TenantScope, user: User, emailOtpCode: string | undefined, options: { keep: boolean },
  ): Promise<void> {
    const { tenant } = scope;
    if (tenant.mfaPolicy !== 'Required') return;
    if (emailOtpCode === undefined) {
      throw MFA_ERRORS.emailCodeRequiredToEnroll();
    }
    if (await this.emailOtp.verify(scope, user, emailOtpCode, options)) return;
    await this.mfa.recordFailedCode(scope, user, ['email']);
    throw MFA_ERRORS.invalidMfaCode();
  }
}
