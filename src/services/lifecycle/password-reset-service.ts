import type { Locale } from '../../lib/locales.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { actingAs, withEm, type TenantScope } from '../../lib/request-scope.js';
import { hashPassword } from '../../security/passwords.js';
import type { AccountTokenService } from './account-token-service.js';
import { passwordResetMail } from './account-mail.js';
import type { AuditService } from '../audit/audit-service.js';
import type { EmailVerificationService } from './email-verification-service.js';
import type { SessionService } from '../sessions/session-service.js';
import type { AccountCredentialService } from './account-credentials.js';
import { assertPasswordAllowed } from '../account-policy/password-policy.js';
import { findLiveEmailVerifiedAt, findLiveUserByEmail, updatePasswordHash } from '../../queries/user.js';
import { SESSION_ERRORS } from '../../errors/session.js';

/**
 * Forgotten-password reset with a mailed single-use token (OWASP Forgot Password Cheat Sheet):
 * the request answers the same whether the account exists, the token is valid one hour, and
 * completing it ends every session of the user.
 * Its steps take the request's scope first and audit as the account's owner (actingAs).
 */
export class PasswordResetService {
  constructor(
    private readonly config: Config,
    private readonly tokens: AccountTokenService,
    private readonly sessions: SessionService,
    private readonly emailVerification: EmailVerificationService,
    private readonly audit: AuditService,
    private readonly credentials: AccountCredentialService,
  ) {}

  /**
   * The link a reset mail carries: the hosted `/app/{slug}/reset-password` page (docs/web.md),
   * which asks for the new password and calls auth/password-reset/complete.
   */
  resetLink(tenant: Tenant, token: string): string {
    return `${this.config.publicUrl}/app/${encodeURIComponent(tenant.slug)}/reset-password?token=${encodeURIComponent(token)}`;
  }

  /**
   * auth/password-reset/request: when a live user of the tenant has this email, issues a reset
   * token (replacing any earlier one) and mails it. The answer is the same whether the account
   * exists, and the mail is delivered after it, so SMTP's duration does not show in the response time.
   */
  async request(em: EntityManager, tenant: Tenant, email: string, locale?: Locale): Promise<void> {
    const user = await findLiveUserByEmail(em, tenant.id, email);
    if (!user) return;
    await this.mailTo(em, tenant, user, locale);
  }

  /**
   * Issues a reset token for `user` (replacing any earlier one) and queues the mail with its link;
   * for auth/password-reset/request and for an admin's POST users/{userId}/password-reset.
   * @param locale the language of the person's own request; an admin's request passes none (the
   *   mail then speaks the person's language, else the workspace's default).
   */
  async mailTo(em: EntityManager, tenant: Tenant, user: User, locale?: Locale): Promise<void> {
    await this.tokens.issueAndMail(em, tenant, user, 'password_reset', (token) => this.resetLink(tenant, token), passwordResetMail, locale);
  }

  /**
   * auth/password-reset/complete: consumes the token, ends any other open reset token of the user,
   * sets the new password (argon2id), ends every session of the user and audits `UserPasswordChanged`
   * (`details.via` = `password_reset`). The token reached the user's mailbox, so an unverified address
   * becomes verified (`UserEmailVerified`); and since whoever registered such an account never proved
   * the address, everything they may have set up goes first (AccountCredentialService.clearAll:
   * factors, passkeys, provider links, sessions; docs/idp.md "Pre-registered accounts").
   * @returns how many sessions were ended.
   * @throws ApiError 401 `invalid_token` (unknown, used, or the user was deleted), 401 `token_expired`,
   *   400 `password_too_short` / `password_too_common` (the workspace's password policy).
   */
  async complete(scope: TenantScope, presented: string, newPassword: string): Promise<number> {
    const { em, tenant } = scope;
    // The policy first: it is public, and the person learns the password rule before anything else.
    assertPasswordAllowed(tenant, newPassword);
    // Check before hashing so an invalid token costs no argon2 work; the consume below decides.
    await this.tokens.peek(em, tenant.id, presented, 'password_reset');
    const passwordHash = await hashPassword(newPassword);
    return em.transactional(async (tx) => {
      const userId = await this.tokens.consume(tx, tenant.id, presented, 'password_reset');
      await this.tokens.revokeOpen(tx, tenant.id, userId, 'password_reset');
      // the mailbox owner acts: every event of the reset is theirs
      const byOwner = actingAs(withEm(scope, tx), userId);
      const owner = await findLiveEmailVerifiedAt(tx, tenant.id, userId);
      if (!owner) throw SESSION_ERRORS.invalidToken();
      const reclaimed = owner.emailVerifiedAt === null ? await this.credentials.clearAll(byOwner, userId, 'password_reset') : undefined;
      const updated = await updatePasswordHash(tx, tenant.id, userId, passwordHash, true);
      if (updated === 0) throw SESSION_ERRORS.invalidToken();
      await this.emailVerification.markVerified(byOwner, userId, 'password_reset');
      const ended = (reclaimed?.sessionsEnded ?? 0) + (await this.sessions.revokeAllForUser(byOwner, userId, 'password_reset'));
      await this.audit.record(byOwner, {
        action: 'UserPasswordChanged', target: { type: 'user', id: userId },
        details: { via: 'password_reset', sessionsEnded: ended, ...(reclaimed ? { reclaimed: true } : {}) },
      });
      return ended;
    });
  }
}
