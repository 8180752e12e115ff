import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import { hashPassword, verifyPassword } from '../../security/passwords.js';
import type { AuditService } from '../audit/audit-service.js';
import type { SessionService } from '../sessions/session-service.js';
import type { AccountTokenService } from '../lifecycle/account-token-service.js';
import type { QueuedPersonalData } from '../jobs/queued-personal-data.js';
import { assertPasswordAllowed } from './password-policy.js';
import { findLiveUserById, lockActiveAdminIds, lockLiveUser, softDeleteUser, updatePasswordHash } from '../../queries/user.js';
import { applyProfileChange } from './user-profile-change.js';
import type { ProfileChange } from '../../lib/profile.js';
import { SIGN_IN_ERRORS } from '../sign-in/sign-in-errors.js';
import { USER_ERRORS } from './user-errors.js';

/** The signed-in user's own account: profile (name, picture), deletion, password, sessions. */
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
  async softDelete(em: EntityManager, tenant: Tenant, userId: string, actor: Actor, meta: RequestMeta): Promise<void> {
    await em.transactional(async (tx) => {
      // Lock the tenant's active admins so two concurrent deletions cannot remove the last two.
      const admins = await lockActiveAdminIds(tx, tenant.id);
      const user = await this.getUser(tx, tenant.id, userId);
      if (user.role === 'Admin' && user.status === 'Active' && admins.length <= 1) {
        throw USER_ERRORS.lastAdminLeaving();
      }
      const now = new Date();
      await softDeleteUser(tx, tenant.id, user.id, now);
      await this.sessions.revokeAllForUser({ em: tx, tenant, actor, meta }, user.id, 'user_deleted');
      await this.queuedPersonalData.discard(tx, tenant.id, user.email);
      await this.audit.recordUnscoped(tx, {
        tenantId: tenant.id,
        action: 'UserSoftDeleted',
        actor,
        target: { type: 'user', id: user.id },
        meta,
        details: { email: user.email },
      });
      // The erasure sweep hard-deletes the user USER_RETENTION_DAYS after `deletedAt` (GDPR art. 17);
      // only the person's own deletion is their request for it.
      const bySubject = actor.type === 'user' && actor.id === user.id;
      if (bySubject) await this.audit.recordUnscoped(tx, {
        tenantId: tenant.id,
        action: 'GdprErasureRequested',
        actor,
        target: { type: 'user', id: user.id },
        meta,
        details: { deletedAt: now.toISOString() },
      });
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
  async updateOwnProfile(em: EntityManager, tenant: Tenant, userId: string, change: ProfileChange, meta: RequestMeta): Promise<User> {
    const actor: Actor = { type: 'user', id: userId };
    return em.transactional(async (tx) => {
      const user = await lockLiveUser(tx, tenant.id, userId);
      if (!user) throw USER_ERRORS.userNotFound();
      const now = new Date();
      const profile = await applyProfileChange(tx, this.audit, user, change, actor, meta, now);
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
  async changePassword(
    em: EntityManager,
    tenant: Tenant,
    user: User,
    sessionId: string,
    currentPassword: string,
    newPassword: string,
    meta: RequestMeta,
  ): Promise<void> {
    assertPasswordAllowed(tenant, newPassword);
    if (!(await verifyPassword(user.passwordHash, currentPassword))) {
      await this.audit.recordUnscoped(em, {
        tenantId: tenant.id,
        action: 'UserLoginFailed',
        actor: { type: 'user', id: user.id },
        target: { type: 'user', id: user.id },
        meta,
        details: { email: user.email, reason: 'invalid_credentials', via: 'password_change' },
      });
      throw SIGN_IN_ERRORS.wrongCurrentPassword();
    }
    const passwordHash = await hashPassword(newPassword);
    const actor: Actor = { type: 'user', id: user.id };
    await em.transactional(async (tx) => {
      await updatePasswordHash(tx, tenant.id, user.id, passwordHash);
      const ended = await this.sessions.revokeAllForUser({ em: tx, tenant, actor, meta }, user.id, 'password_changed', sessionId);
      const resetLinksEnded = await this.accountTokens.revokeOpen(tx, tenant.id, user.id, 'password_reset');
      await this.audit.recordUnscoped(tx, {
        tenantId: tenant.id,
        action: 'UserPasswordChanged',
        actor,
        target: { type: 'user', id: user.id },
        meta,
        details: { otherSessionsEnded: ended, resetLinksEnded },
      });
    });
  }

  /**
   * Ends every session of the user, the calling one included (auth/logout-all). Audits `UserLogout`.
   * @returns how many sessions were ended.
   */
  async logoutAll(em: EntityManager, tenant: Tenant, userId: string, meta: RequestMeta): Promise<number> {
    const actor: Actor = { type: 'user', id: userId };
    return em.transactional(async (tx) => {
      const count = await this.sessions.revokeAllForUser({ em: tx, tenant, actor, meta }, userId, 'logout_all');
      await this.audit.recordUnscoped(tx, {
        tenantId: tenant.id,
        action: 'UserLogout',
        actor,
        target: { type: 'user', id: userId },
        meta,
        details: { allSessions: true, count },
      });
      return count;
    });
  }
}
