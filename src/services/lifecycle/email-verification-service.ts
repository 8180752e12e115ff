import type { Locale } from '../../lib/locales.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { actingAs, withEm, type TenantScope } from '../../lib/request-scope.js';
import type { AccountTokenService } from './account-token-service.js';
import { verificationMail } from './account-mail.js';
import type { AuditService } from '../audit/audit-service.js';
import { findLiveUserByEmail, markEmailVerified } from '../../queries/user.js';
import { SESSION_ERRORS } from '../../errors/session.js';

/**
 * Email verification: a mailed single-use token proves the user controls the address. Users of a
 * tenant with `requireEmailVerification` stay `Pending` (no sign-in) until then.
 * Its steps take the request's scope first and audit as the account's owner (actingAs).
 */
export class EmailVerificationService {
  constructor(
    private readonly config: Config,
    private readonly tokens: AccountTokenService,
    private readonly audit: AuditService,
  ) {}

  /** The link a verification mail carries: the hosted verify-email page (docs/web.md), which calls auth/verify-email. */
  verificationLink(tenant: Tenant, token: string): string {
    return `${this.config.publicUrl}/app/${encodeURIComponent(tenant.slug)}/verify-email?token=${encodeURIComponent(token)}`;
  }

  /**
   * Issues a verification token for a user whose address is not verified yet (replacing any
   * earlier one) and mails it after the caller's answer; an undelivered mail is logged, not raised:
   * the account exists either way and the user can ask again (auth/request-email-verification).
   * @returns false when the address was already verified (nothing sent).
   */
  async send(em: EntityManager, tenant: Tenant, user: User, locale?: Locale): Promise<boolean> {
    if (user.emailVerifiedAt) return false;
    await this.tokens.issueAndMail(em, tenant, user, 'email_verification', (token) => this.verificationLink(tenant, token), verificationMail, locale);
    return true;
  }

  /**
   * After auth/signup: mails the verification link when the tenant requires verification (the new
   * user is `Pending` until it is used). Other tenants' users verify on request only
   * (auth/request-email-verification), so a signup there sends no mail the tenant did not ask for.
   * @returns whether a link was sent.
   */
  async sendAfterSignup(em: EntityManager, tenant: Tenant, user: User): Promise<boolean> {
    if (!tenant.requireEmailVerification) return false;
    return this.send(em, tenant, user);
  }

  /**
   * The work of auth/request-email-verification, run by the queue worker (the route only queues an
   * `account-mail.request` job, so the answer's duration says nothing about the account; see
   * AccountMailRequests): mails a new token when a live, unverified user has this email, nothing
   * otherwise.
   */
  async request(em: EntityManager, tenant: Tenant, email: string, locale?: Locale): Promise<void> {
    const user = await findLiveUserByEmail(em, tenant.id, email);
    if (user) await this.send(em, tenant, user, locale);
  }

  /**
   * auth/verify-email: consumes the token of the scope's workspace, sets `emailVerifiedAt`, turns a
   * `Pending` user `Active` and audits `UserEmailVerified`.
   * @throws ApiError 401 `invalid_token` (unknown, used, or the user was deleted), 401 `token_expired`.
   */
  async verify(scope: TenantScope, presented: string): Promise<void> {
    await scope.em.transactional(async (tx) => {
      const userId = await this.tokens.consume(tx, scope.tenant.id, presented, 'email_verification');
      await this.markVerified(withEm(scope, tx), userId, 'email_verification');
    });
  }

  /**
   * Marks a live user's address verified (a mailed token reached them) and activates a `Pending`
   * user; audits `UserEmailVerified` the first time, with the user as actor (the mailbox owner).
   * Call inside a transaction (`scope.em`).
   * @throws ApiError 401 `invalid_token` when the user no longer exists or was deleted.
   */
  async markVerified(scope: TenantScope, userId: string, via: 'email_verification' | 'password_reset'): Promise<void> {
    const now = new Date();
    const verifiedAt = await markEmailVerified(scope.em, scope.tenant.id, userId, now);
    if (!verifiedAt) throw SESSION_ERRORS.invalidToken();
    if (new Date(verifiedAt).getTime() !== now.getTime()) return;
    await this.audit.record(actingAs(scope, userId), { action: 'UserEmailVerified', target: { type: 'user', id: userId }, details: { via } });
  }
}
