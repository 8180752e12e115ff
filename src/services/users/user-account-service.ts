import type { EntityManager } from '@mikro-orm/postgresql';
import type { User } from '../../entities/user.js';
import { actingAs, withEm, type RequestScope, type TenantScope } from '../../lib/request-scope.js';
import { hashPassword, verifyPassword } from '../../security/passwords.js';
import type { AuditService } from '../audit/audit-service.js';
import type { SessionService } from '../sessions/session-service.js';
import type { AccountTokenService } from '../lifecycle/account-token-service.js';
import type { QueuedPersonalData } from '../mail/queued-personal-data.js';
import { assertPasswordAllowed } from '../account-policy/password-policy.js';
import { findLiveUserById, lockActiveAdminIds, lockLiveUser, softDeleteUser, updatePasswordHash } from '../../queries/user.js';
import { applyProfileChange } from './user-profile-change.js';
import type { ProfileChange } from '../../lib/profile.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';
import { USER_ERRORS } from '../../errors/user.js';

/**
 * The signed-in user's own account: profile (name, picture), deletion, password, sessions. The
 * person's own changes take the request's scope and the user's id, and are audited with the person
 * as actor (`actingAs`); a deletion is audited by the scope's actor (the person, an Admin or an API key).
 */
export class UserAccountService {
  constructor(
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly accountTokens: AccountTokenService,
    private readonly queuedPersonalData: QueuedPersonalData,
  ) {}

  /**
   * The live user of a tenant by id.
   * @throws ApiError 404 when absent or deleted.
   */
  async getUser(em: EntityManager, tenantId: string, userId: string): Promise<User> {
    const user = await findLiveUserById(em, tenantId, userId);
    if (!user) throw USER_ERRORS.userNotFound();
    return user;
  }

  /**
   * Soft-deletes a user (docs/api-rules.md "Resources"): `deletedAt` set, every session ended at once, hidden from lists,
   * unable to log in; audits `UserSoftDeleted`, and `GdprErasureRequested` only when the person deletes
   * their own account (DELETE me: the data subject's request, GDPR art. 17); an Admin's or API key's
   * deletion is not a request of the person (docs/decisions.md "Data protection"). Either way the
   * erasure sweep hard-deletes the user `USER_RETENTION_DAYS` later. In the same transaction, the mails still queued to the
   * user's address and the queued account-mail requests naming it are deleted (docs/events.md
   * "Erasure"); the webhook event of the deletion itself is queued as usual. The last active Admin
   * cannot be deleted.
   * @throws ApiError 404 unknown user, 409 `last_admin`.
   */
  async softDelete(scope: RequestScope, userId: string): Promise<void> {
    const { tenant, actor } = scope;
    await scope.em.transactional(async (tx) => {
      const inTx = withEm(scope, tx);
      // Lock the tenant's active admins so two concurrent deletions cannot remove the last two.
      const admins = await lockActiveAdminIds(tx, tenant.id);
      const user = await this.getUser(tx, tenant.id, userId);
      if (user.role === 'Admin' && user.status === 'Active' && admins.length <= 1) {
        throw USER_ERRORS.lastAdminLeaving();
      }
      const now = new Date();
      await softDeleteUser(tx, tenant.id, user.id, now);
      await this.sessions.revokeAllForUser(inTx, user.id, 'user_deleted');
      await this.queuedPersonalData.discard(tx, tenant.id, user.email);
      await this.audit.record(inTx, { action: 'UserSoftDeleted', target: { type: 'user', id: user.id }, details: { email: user.email } });
      // The erasure sweep hard-deletes the user USER_RETENTION_DAYS after `deletedAt` (GDPR art. 17);
      // only the person's own deletion is their request for it.
      const bySubject = actor.type === 'user' && actor.id === user.id;
      if (bySubject) {
        await this.audit.record(inTx, { action: 'GdprErasureRequested', target: { type: 'user', id: user.id }, details: { deletedAt: now.toISOString() } });
      }
    });
  }

  /**
   * The signed-in person edits their own profile (PATCH me; docs/api-rules.md "Users and sign-up"):
   * `name` and `picture` (already validated by lib/profile.ts; null clears one, absent leaves it),
   * under a lock of their row. Audits `UserProfileUpdated` (`details.changed`) with the person as
   * actor and target; nothing when nothing changed.
   * @returns the user as stored afterwards.
   * @throws ApiError 404 when the user is absent or deleted.
   */
  async updateOwnProfile(scope: TenantScope, userId: string, change: ProfileChange): Promise<User> {
    return scope.em.transactional(async (tx) => {
      const user = await lockLiveUser(tx, scope.tenant.id, userId);
      if (!user) throw USER_ERRORS.userNotFound();
      const now = new Date();
      const profile = await applyProfileChange(actingAs(withEm(scope, tx), userId), this.audit, user, change, now);
      const changed = profile.name !== user.name || profile.picture !== user.picture;
      return { ...user, ...profile, updatedAt: changed ? now : user.updatedAt };
    });
  }

  /**
   * Changes the signed-in user's password after checking the current one. Every other session of
   * the user ends; the calling session stays; every open password-reset link of the user ends too.
   * Audits `UserPasswordChanged`; a wrong current password is audited as `UserLoginFailed`
   * (`details.reason` `invalid_credentials`, `via` `password_change`). The caller runs it inside the
   * login brute-force budget of the account (docs/security.md).
   * @throws ApiError 400 `password_too_short` / `password_too_common` (the workspace's password
   *   policy, checked first), 401 `invalid_credentials` when `currentPassword` is wrong.
   */
  async changePassword(scope: TenantScope, user: User, sessionId: string, currentPassword: string, newPassword: string): Promise<void> {
    const { tenant } = scope;
    const byUser = actingAs(scope, user.id);
    assertPasswordAllowed(tenant, newPassword);
    if (!(await verifyPassword(user.passwordHash, currentPassword))) {
      await this.audit.record(byUser, {
        action: 'UserLoginFailed', target: { type: 'user', id: user.id }, details: { email: user.email, reason: 'invalid_credentials', via: 'password_change' },
      });
      throw SIGN_IN_ERRORS.wrongCurrentPassword();
    }
    const passwordHash = await hashPassword(newPassword);
    await scope.em.transactional(async (tx) => {
      const inTx = withEm(byUser, tx);
      await updatePasswordHash(tx, tenant.id, user.id, passwordHash);
      const ended = await this.sessions.revokeAllForUser(inTx, user.id, 'password_changed', sessionId);
      const resetLinksEnded = await this.accountTokens.revokeOpen(tx, tenant.id, user.id, 'password_reset');
      await this.audit.record(inTx, { action: 'UserPasswordChanged', target: { type: 'user', id: user.id }, details: { otherSessionsEnded: ended, resetLinksEnded } });
    });
  }

  /**
   * Ends every session of the user, the calling one included (auth/logout-all). Audits `UserLogout`.
   * @returns how many sessions were ended.
   */
  async logoutAll(scope: TenantScope, userId: string): Promise<number> {
    return scope.em.transactional(async (tx) => {
      const byUser = actingAs(withEm(scope, tx), userId);
      const count = await this.sessions.revokeAllForUser(byUser, userId, 'logout_all');
      await this.audit.record(byUser, { action: 'UserLogout', target: { type: 'user', id: userId }, details: { allSessions: true, count } });
      return count;
    });
  }
}
