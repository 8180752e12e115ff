import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import { EmailOtpSchema } from '../../entities/email-otp.js';
import type { Tenant } from '../../entities/tenant.js';
import { UserSchema, type User } from '../../entities/user.js';
import { normalizeEmail } from '../../lib/email.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { actingAs, withEm, type TenantScope } from '../../lib/request-scope.js';
import { verifyPassword } from '../../security/passwords.js';
import type { AuditService } from '../audit/audit-service.js';
import type { Mailer } from '../mail/mailer.js';
import { assertRecentSignIn, type EnrollingSession } from '../mfa/mfa-enrollment-service.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';
import { assertMaySignUp } from '../account-policy/signup-policy.js';
import { USER_ERRORS } from '../../errors/user.js';
import { findLiveUserByEmail, findLiveUserById } from '../../queries/user.js';
import { ACCOUNT_TOKEN_TTL_SECONDS, type AccountTokenService } from './account-token-service.js';
import { emailChangedNotice, emailChangeMail } from './account-mail.js';
import { SESSION_ERRORS } from '../../errors/session.js';

/** What a confirmed change did: the user and both addresses. */
export interface EmailChangeResult {
  userId: string;
  previousEmail: string;
  newEmail: string;
}

/**
 * Changing the sign-in email of one's own account (docs/lifecycle.md "Changing the email address"):
 * `POST me/email` proves the person (a sign-in less than 10 minutes old, and the current password
 * when the account has one) and mails a single-use link to the NEW address; `POST
 * auth/email-change/confirm` with that link's token switches the address, marks it verified, ends
 * every open link and code mailed to the old address, and mails the OLD address a notice. Sessions
 * stay (docs/decisions.md "Account lifecycle").
 * Its steps take the request's scope first and audit as the account's owner (actingAs).
 */
export class EmailChangeService {
  constructor(
    private readonly config: Config,
    private readonly tokens: AccountTokenService,
    private readonly mailer: Mailer,
    private readonly audit: AuditService,
  ) {}

  /** The link of the confirmation mail: the hosted `/app/{slug}/confirm-email` page (docs/web.md), which calls auth/email-change/confirm. */
  confirmationLink(tenant: Tenant, token: string): string {
    return `${this.config.publicUrl}/app/${encodeURIComponent(tenant.slug)}/confirm-email?token=${encodeURIComponent(token)}`;
  }

  /**
   * `POST me/email`: checks the session's sign-in is recent and, for an account with a password,
   * the current password (a wrong or missing one is audited `UserLoginFailed`, `via`
   * `email_change`; the caller runs this inside login's per-account budget); checks the new address
   * (not the current one, not a live user's of the tenant, of an allowed domain under the `Domains`
   * sign-up policy); issues an `email_change` token (24 hours, replacing an earlier one) and audits
   * `UserEmailChangeRequested` in one transaction, then queues the confirmation mail to the new address.
   * @param newEmail the address asked for (normalised here: trimmed, lower-cased).
   * @throws ApiError 401 `reauthentication_required` / `invalid_credentials`, 400 `email_unchanged`,
   *   403 `signup_domain_not_allowed`, 409 `email_taken`.
   */
  async request(scope: TenantScope, session: EnrollingSession, newEmail: string, currentPassword: string | undefined): Promise<void> {
    const { em, tenant, meta } = scope;
    await assertRecentSignIn(em, tenant, session, 'change your sign-in email');
    const user = await findLiveUserById(em, tenant.id, session.userId);
    if (!user) throw SESSION_ERRORS.invalidToken();
    const byUser = actingAs(scope, user.id);
    if (user.passwordHash !== null && !(currentPassword !== undefined && (await verifyPassword(user.passwordHash, currentPassword)))) {
      await this.audit.record(byUser, {
        action: 'UserLoginFailed', target: { type: 'user', id: user.id }, details: { email: user.email, reason: 'invalid_credentials', via: 'email_change' },
      });
      throw SIGN_IN_ERRORS.wrongCurrentPassword();
    }
    const address = normalizeEmail(newEmail);
    if (address === user.email) throw USER_ERRORS.emailUnchanged();
    if (tenant.signupPolicy === 'Domains') assertMaySignUp(tenant, address);
    if (await findLiveUserByEmail(em, tenant.id, address)) {
      throw SIGN_IN_ERRORS.emailTakenByAnotherAccount();
    }
    await em.transactional(async (tx) => {
      const issued = await this.tokens.issue(tx, tenant.id, user.id, 'email_change', new Date(), address);
      await this.audit.record(withEm(byUser, tx), {
        action: 'UserEmailChangeRequested', target: { type: 'user', id: user.id },
        details: { previousEmail: user.email, newEmail: address, expiresAt: issued.expiresAt.toISOString() },
      });
      const message = emailChangeMail(this.mailer.contextFor(tenant, address, meta.locale, user.locale), {
        link: this.confirmationLink(tenant, issued.token),
        ttlSeconds: ACCOUNT_TOKEN_TTL_SECONDS.email_change,
      });
      // queued in the request's transaction: the token only exists with its mail on the way
      await this.mailer.send(message, tenant.id, tx);
    });
  }

  /**
   * `POST auth/email-change/confirm`: in one transaction, consumes the token (of this tenant only),
   * locks the live user, re-checks that no other live user of the tenant took the address meanwhile,
   * sets the address and `emailVerifiedAt` (a `Pending` user becomes `Active`), ends the open
   * verification and reset links and the email code mailed to the old address, and audits
   * `UserEmailChanged`, and queues the notice to the old address, all in one transaction. Sessions are kept.
   * @throws ApiError 401 `invalid_token` (unknown, used, another tenant's, the user was deleted),
   *   401 `token_expired`, 409 `email_taken` (the token stays unused then).
   */
  async confirm(scope: TenantScope, presented: string): Promise<EmailChangeResult> {
    const { em, tenant, meta } = scope;
    const result = await em.transactional(async (tx) => {
      const { userId, newEmail } = await this.tokens.consumeEmailChange(tx, tenant.id, presented);
      const user = await tx.findOne(
        UserSchema,
        { id: userId, tenantId: tenant.id, deletedAt: null },
        { lockMode: LockMode.PESSIMISTIC_WRITE, disableIdentityMap: true },
      );
      if (!user) throw SESSION_ERRORS.invalidToken();
      const holder = await findLiveUserByEmail(tx, tenant.id, newEmail);
      if (holder && holder.id !== user.id) throw SIGN_IN_ERRORS.emailTakenByAnotherAccount();
      await this.switchAddress(tx, tenant, user, newEmail);
      const linksEnded =
        (await this.tokens.revokeOpen(tx, tenant.id, user.id, 'email_verification')) +
        (await this.tokens.revokeOpen(tx, tenant.id, user.id, 'password_reset'));
      await tx.nativeDelete(EmailOtpSchema, { userId: user.id, tenantId: tenant.id });
      await this.audit.record(actingAs(withEm(scope, tx), user.id), {
        action: 'UserEmailChanged', target: { type: 'user', id: user.id }, details: { previousEmail: user.email, newEmail, linksEnded },
      });
      // the notice to the old address is queued with the change: no silent takeover of the address
      const context = this.mailer.contextFor(tenant, user.email, meta.locale, user.locale);
      await this.mailer.send(emailChangedNotice(context, newEmail), tenant.id, tx);
      return { userId: user.id, previousEmail: user.email, newEmail };
    });
    return result;
  }

  /** Writes the new, verified address; a concurrent change to the same address loses on the unique index (409). */
  private async switchAddress(tx: EntityManager, tenant: Tenant, user: User, newEmail: string): Promise<void> {
    const now = new Date();
    try {
      await tx.nativeUpdate(
        UserSchema,
        { id: user.id, tenantId: tenant.id },
        { email: newEmail, emailVerifiedAt: now, status: user.status === 'Pending' ? 'Active' : user.status, updatedAt: now },
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw SIGN_IN_ERRORS.emailTakenByAnotherAccount();
      throw err;
    }
  }
}
