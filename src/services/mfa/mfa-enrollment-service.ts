import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import type { FactorChangeNotifier } from './factor-change-notice.js';
import type { RecoveryCodeService } from './recovery-code-service.js';
import { isTotpEnrolled, type TotpEnrollment, type TotpService } from './totp-service.js';
import { lockUserWithActiveTotp } from '../../queries/user.js';
import { findLiveSessionAuthenticatedAt } from '../../queries/session.js';
import { SESSION_ERRORS } from '../../errors/session.js';
import { MFA_ERRORS } from '../../errors/mfa.js';

/**
 * How the service reads the enrolling user: the users feature's `UserAccountService.getUser`, which
 * throws 404 `not_found` for an unknown or deleted user.
 */
export interface LiveUserSource {
  getUser(em: EntityManager, tenantId: string, userId: string): Promise<User>;
}

/**
 * Seconds since the session was last authenticated (password, provider or factor) within which it
 * may add a factor: 10 minutes (docs/mfa.md "Recent sign-in", OWASP ASVS V6 re-authentication).
 */
export const RECENT_SIGN_IN_SECONDS = 600;

/** The signed-in user's session, as a factor change needs it. */
export interface EnrollingSession {
  userId: string;
  /** The `sid` claim of the access token. */
  sessionId: string;
}

/**
 * TOTP enrolment by a signed-in user (`mfa/totp/enroll`, `mfa/totp/verify`). A stolen access token
 * (or a session kept alive by refreshing) must not be enough to add a factor and lock the owner out,
 * so both steps need a recent sign-in: the session's `authenticated_at` less than
 * {@link RECENT_SIGN_IN_SECONDS} ago. Refreshing does not renew it; signing in again does.
 * Its operations take the request's scope first (RequestScope) and audit with the scope's actor and
 * metadata.
 */
export class MfaEnrollmentService {
  constructor(
    private readonly accounts: LiveUserSource,
    private readonly totp: TotpService,
    private readonly recoveryCodes: RecoveryCodeService,
    private readonly audit: AuditService,
    private readonly notices: FactorChangeNotifier,
  ) {}

  /**
   * Step 1: a new pending secret for the session's user.
   * @throws ApiError 401 `reauthentication_required`, 403 `mfa_disabled`, 409 `totp_already_enrolled`.
   */
  async start(em: EntityManager, tenant: Tenant, session: EnrollingSession): Promise<TotpEnrollment> {
    await this.assertRecentSignIn(em, tenant, session);
    const user = await this.accounts.getUser(em, tenant.id, session.userId);
    return this.totp.startEnrollment(em, tenant, user);
  }

  /**
   * Step 2: activates the pending secret with a code (audited, and the user is mailed a notice).
   * @returns the user's new recovery codes (docs/mfa.md "Recovery codes"), to be shown once.
   * @throws ApiError 401 `reauthentication_required` / `invalid_mfa_code`, 403 `mfa_disabled`, 409
   *   `totp_already_enrolled` / `totp_enrollment_not_started`.
   */
  async confirm(scope: RequestScope, session: EnrollingSession, code: string): Promise<string[]> {
    const { em, tenant } = scope;
    await this.assertRecentSignIn(em, tenant, session);
    const user = await this.accounts.getUser(em, tenant.id, session.userId);
    return this.totp.confirmEnrollment(scope, user, code);
  }

  /**
   * `mfa/recovery-codes`: a new set of recovery codes replaces the old one (docs/mfa.md "Recovery
   * codes"). Needs a recent sign-in like enrolment, and an active TOTP factor. Audits
   * `MfaRecoveryCodesGenerated` and mails the user a notice.
   * @returns the new codes in plaintext, to be shown once.
   * @throws ApiError 401 `reauthentication_required`, 409 `totp_not_enrolled`.
   */
  async regenerateRecoveryCodes(scope: RequestScope, session: EnrollingSession): Promise<string[]> {
    const { em, tenant } = scope;
    await this.assertRecentSignIn(em, tenant, session);
    const user = await this.accounts.getUser(em, tenant.id, session.userId);
    if (!isTotpEnrolled(user)) throw MFA_ERRORS.totpNotEnrolled();
    const codes = await em.transactional(async (tx) => {
      // Locks the user row and re-checks the factor, so a concurrent removal cannot leave codes behind.
      if (!(await lockUserWithActiveTotp(tx, tenant.id, user.id))) throw MFA_ERRORS.totpNotEnrolled();
      const issued = await this.recoveryCodes.replace(tx, tenant.id, user.id);
      await this.audit.record(withEm(scope, tx), {
        action: 'MfaRecoveryCodesGenerated',
        target: { type: 'user', id: user.id },
        details: { count: issued.length },
      });
      await this.notices.notify(withEm(scope, tx), user, 'recovery_codes_regenerated');
      return issued;
    });
    return codes;
  }

  /**
   * `DELETE mfa/totp`: the signed-in user turns their own authenticator app off (active and pending
   * secret, and the recovery codes). Needs a recent sign-in like enrolment; idempotent. Audits
   * `MfaTotpDisabled` and mails the user a notice when a factor was active. Under the `Required`
   * policy the login rules then ask for the email code instead (docs/mfa.md "Policy at login").
   * @throws ApiError 401 `reauthentication_required`.
   */
  async disable(scope: RequestScope, session: EnrollingSession): Promise<void> {
    const { em, tenant } = scope;
    await this.assertRecentSignIn(em, tenant, session);
    await this.totp.disable(scope, session.userId);
  }

  /** See {@link assertRecentSignIn}. */
  private async assertRecentSignIn(em: EntityManager, tenant: Tenant, session: EnrollingSession): Promise<void> {
    await assertRecentSignIn(em, tenant, session);
  }
}

/**
 * Reads the session row (tenant-scoped) and checks it was authenticated less than
 * {@link RECENT_SIGN_IN_SECONDS} ago (docs/mfa.md "Recent sign-in"); used by every change of a
 * user's factors (TOTP enrolment and removal, passkey registration and deletion) and of the sign-in
 * email.
 * @param change what the caller is about to change, for the message ("change your second factors").
 * @throws ApiError 401 `reauthentication_required` (with `details.maxAgeSeconds`).
 */
export async function assertRecentSignIn(
  em: EntityManager,
  tenant: Tenant,
  session: EnrollingSession,
  change = 'change your second factors',
): Promise<void> {
  const authenticatedAt = (await findLiveSessionAuthenticatedAt(em, tenant.id, session.userId, session.sessionId))?.authenticatedAt;
  const ageMs = authenticatedAt ? Date.now() - new Date(authenticatedAt).getTime() : Number.POSITIVE_INFINITY;
  if (ageMs >= RECENT_SIGN_IN_SECONDS * 1000) {
    throw SESSION_ERRORS.reauthenticationRequired({ change, maxAgeSeconds: RECENT_SIGN_IN_SECONDS });
  }
}
