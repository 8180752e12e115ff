import type { EntityManager } from '@mikro-orm/postgresql';
import { findLatestSoftDeletion } from '../../queries/audit-event.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User, UserRole } from '../../entities/user.js';
import { newUser } from '../../entities/new-user.js';
import { normalizeEmail } from '../../lib/email.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { hashPassword } from '../../security/passwords.js';
import type { AccountLockoutService } from '../rate-limits/account-lockout.js';
import { ACCOUNT_FAILURES_ALL_IPS } from '../rate-limits/rate-limit-rules.js';
import { assertPasswordAllowed } from '../account-policy/password-policy.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import type { SessionService } from '../sessions/session-service.js';
import type { EmailVerificationService } from '../lifecycle/email-verification-service.js';
import type { PasswordResetService } from '../lifecycle/password-reset-service.js';
import { isUuid } from '../../lib/uuid.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';
import { USER_ERRORS } from '../../errors/user.js';
import { applyProfileChange } from './user-profile-change.js';
import {
  countLiveUsersWithEmail, findLiveUserById, insertUser, lockActiveAdminIds, lockDeletedUser, lockLiveUser, restoreUser, updateRoleAndStatus, updateCustomData,
} from '../../queries/user.js';

/** The changes an admin makes to a user with PATCH users/{userId}. */
export interface UserAdministrationChange {
  role?: UserRole;
  /** `Suspended` ends every session at once; `Active` lets a suspended user sign in again. */
  status?: 'Active' | 'Suspended';
  /** Replaces the user's custom data: a JSON object of at most CUSTOM_DATA_MAX_BYTES (docs/oidc.md "Roles and permissions"). */
  customData?: Record<string, unknown>;
  /** The display name (lib/profile.ts `profileName`); null clears it. */
  name?: string | null;
  /** The picture URL (lib/profile.ts `profilePicture`); null clears it. */
  picture?: string | null;
}

/** The largest custom data of a user, in bytes of its JSON (UTF-8). */
export const CUSTOM_DATA_MAX_BYTES = 4096;

/** A user an admin creates with POST users. */
export interface NewUserByAdmin {
  email: string;
  /** Default `Member`. */
  role?: UserRole;
  /** Checked against the workspace's password policy; without one the user is mailed a link to set it. */
  password?: string;
  /** True: the address counts as verified from now on (default false). */
  emailVerified?: boolean;
}

/**
 * An admin's changes to another user (docs/api-rules.md "Users and sign-up"): role and suspension.
 * The role is read from the database on every request, so a change applies to existing sessions at
 * once, both ways.
 * Every operation takes the request's scope first (RequestScope: the workspace, the acting Admin or
 * API key, the metadata) and is audited with it.
 */
export class UserAdministrationService {
  constructor(
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly passwordReset: PasswordResetService,
    private readonly emailVerification: EmailVerificationService,
    private readonly lockout: AccountLockoutService,
    /** `USER_RETENTION_DAYS`: how long a deleted user can be restored. */
    private readonly userRetentionDays: number,
  ) {}

  /** A live (not deleted) user of the tenant. @throws ApiError 404 `not_found`. */
  private async liveUser(em: EntityManager, tenant: Tenant, userId: string): Promise<User> {
    const user = isUuid(userId) ? await findLiveUserById(em, tenant.id, userId) : null;
    if (!user) throw USER_ERRORS.userNotFound();
    return user;
  }

  /**
   * An admin creates a user (POST users; docs/api-rules.md "Users and sign-up"): `Active` at once
   * (the admin vouches for them, whatever the sign-up policy and verification requirement), with the
   * given role (default `Member`). With a password (checked against the workspace's password policy)
   * they sign in with it at once; without one they have none and are mailed the password-reset link
   * (valid one hour; setting the password through it also verifies the address). Audits `UserCreated`
   * (`email`, `role`, `emailVerified`, `passwordSet`) in the same transaction as the insert and the mail.
   * @returns the user as stored.
   * @throws ApiError 400 `password_too_short` / `password_too_common`, 409 `email_taken` when a live
   *   user of the workspace has the address.
   */
  async create(scope: RequestScope, input: NewUserByAdmin): Promise<User> {
    const { em, tenant } = scope;
    if (input.password !== undefined) assertPasswordAllowed(tenant, input.password);
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    const now = new Date();
    const user = newUser({
      tenantId: tenant.id, email: normalizeEmail(input.email), passwordHash, status: 'Active', role: input.role ?? 'Member',
      emailVerifiedAt: input.emailVerified ? now : null,
    }, now);
    try {
      await em.transactional(async (tx) => {
        if ((await countLiveUsersWithEmail(tx, tenant.id, user.email)) > 0) {
          throw SIGN_IN_ERRORS.emailTaken();
        }
        await insertUser(tx, user);
        await this.audit.record(withEm(scope, tx), {
          action: 'UserCreated', target: { type: 'user', id: user.id },
          details: { email: user.email, role: user.role, emailVerified: user.emailVerifiedAt !== null, passwordSet: passwordHash !== null },
        });
        if (passwordHash === null) await this.passwordReset.mailTo(tx, tenant, user);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw SIGN_IN_ERRORS.emailTaken();
      throw err;
    }
    return user;
  }

  /**
   * Lifts the lockout of a user's address (POST users/{userId}/unlock; docs/api-rules.md "Workspace
   * policies"): login from every client counts afresh (AccountLockoutService.unlock). Audits
   * `UserUnlocked` (`email`). Idempotent: a user who was not locked out is unlocked all the same.
   * @throws ApiError 404 unknown or deleted user.
   */
  async unlock(scope: RequestScope, userId: string): Promise<void> {
    const { em, tenant } = scope;
    const user = await this.liveUser(em, tenant, userId);
    await this.lockout.unlock(tenant.slug, user.email, ACCOUNT_FAILURES_ALL_IPS);
    await this.audit.record(scope, { action: 'UserUnlocked', target: { type: 'user', id: user.id }, details: { email: user.email } });
  }

  /**
   * An admin sends a user the password-reset mail (the same link as auth/password-reset/request,
   * valid one hour, replacing any earlier one). Audits `UserPasswordResetSent`. The admin never sees
   * the token: only the mailbox owner can use it.
   * @throws ApiError 404 unknown or deleted user.
   */
  async sendPasswordReset(scope: RequestScope, userId: string): Promise<void> {
    const { em, tenant } = scope;
    const user = await this.liveUser(em, tenant, userId);
    await this.passwordReset.mailTo(em, tenant, user);
    await this.audit.record(scope, { action: 'UserPasswordResetSent', target: { type: 'user', id: user.id }, details: { email: user.email } });
  }

  /**
   * An admin sends a user whose address is not verified a new verification link (replacing any
   * earlier one). Audits `UserVerificationMailSent`.
   * @throws ApiError 404 unknown or deleted user, 409 `email_already_verified`.
   */
  async sendVerificationMail(scope: RequestScope, userId: string): Promise<void> {
    const { em, tenant } = scope;
    const user = await this.liveUser(em, tenant, userId);
    if (!(await this.emailVerification.send(em, tenant, user))) {
      throw USER_ERRORS.emailAlreadyVerified();
    }
    await this.audit.record(scope, { action: 'UserVerificationMailSent', target: { type: 'user', id: user.id }, details: { email: user.email } });
  }

  /**
   * Brings back a user an admin deleted, within `USER_RETENTION_DAYS` of the deletion (before the
   * erasure sweep removes them): the row becomes live again with its role, status, factors and
   * passkeys; its sessions stay ended (the user signs in again). Audits `UserRestored`. A user who
   * deleted their own account asked for erasure (GDPR art. 17) and is not restored.
   * @returns the user as stored afterwards.
   * @throws ApiError 404 unknown, live, erased or past-retention user; 409 `erasure_requested_by_user`;
   *   409 `email_taken` when a live user of the tenant has the address now.
   */
  async restore(scope: RequestScope, userId: string): Promise<User> {
    const { em, tenant } = scope;
    if (!isUuid(userId)) throw USER_ERRORS.userNotFound();
    return em.transactional(async (tx) => {
      const user = await lockDeletedUser(tx, tenant.id, userId);
      if (!user) throw USER_ERRORS.userNotFound();
      const now = new Date();
      if (user.deletedAt!.getTime() < now.getTime() - this.userRetentionDays * 86_400_000) throw USER_ERRORS.userNotFound();
      const deletion = await findLatestSoftDeletion(tx, tenant.id, user.id);
      if (deletion?.actorType === 'user' && deletion.actorId === user.id) {
        throw USER_ERRORS.erasureRequestedByUser();
      }
      const taken = await countLiveUsersWithEmail(tx, tenant.id, user.email);
      if (taken > 0) throw SIGN_IN_ERRORS.emailTakenSinceDeletion();
      await restoreUser(tx, tenant.id, user.id, now);
      await this.audit.record(withEm(scope, tx), {
        action: 'UserRestored', target: { type: 'user', id: user.id },
        details: { email: user.email, deletedAt: user.deletedAt!.toISOString() },
      });
      return { ...user, deletedAt: null, updatedAt: now };
    });
  }

  /**
   * Applies a role and/or status change under a lock of the tenant's active admins, so two
   * concurrent demotions cannot remove the last two. Suspending ends every session of the user
   * (`SessionRevoked`, reason `user_suspended`). Audits `UserRoleChanged` (`details.from`, `to`),
   * `UserSuspended` or `UserReactivated`, with the acting admin or API key as actor and the user as
   * target; custom data `UserCustomDataChanged`, name and picture `UserProfileUpdated`
   * (`details.changed`, see applyProfileChange); a change to what the user already has writes nothing.
   * @returns the user as stored afterwards.
   * @throws ApiError 404 unknown or deleted user, 409 `last_admin` (demoting or suspending the last
   *   active Admin), 409 `email_not_verified` (a `Pending` user becomes `Active` by verifying, not by an admin).
   */
  async change(scope: RequestScope, userId: string, change: UserAdministrationChange): Promise<User> {
    const { em, tenant } = scope;
    const customDataJson = change.customData === undefined ? undefined : JSON.stringify(change.customData);
    if (customDataJson !== undefined && Buffer.byteLength(customDataJson, 'utf8') > CUSTOM_DATA_MAX_BYTES) {
      throw USER_ERRORS.customDataTooLarge({ maxBytes: CUSTOM_DATA_MAX_BYTES });
    }
    return em.transactional(async (tx) => {
      const admins = await lockActiveAdminIds(tx, tenant.id);
      const user = await lockLiveUser(tx, tenant.id, userId);
      if (!user) throw USER_ERRORS.userNotFound();
      const role = change.role ?? user.role;
      const status = change.status ?? user.status;
      if (status === 'Active' && user.status === 'Pending') {
        throw SIGN_IN_ERRORS.activatedByVerification();
      }
      const wasActiveAdmin = user.role === 'Admin' && user.status === 'Active';
      const staysActiveAdmin = role === 'Admin' && status === 'Active';
      if (wasActiveAdmin && !staysActiveAdmin && admins.length <= 1) {
        throw USER_ERRORS.lastAdmin();
      }
      const now = new Date();
      const target = { type: 'user', id: user.id };
      let customData = user.customData;
      if (customDataJson !== undefined && customDataJson !== JSON.stringify(user.customData)) {
        customData = JSON.parse(customDataJson) as Record<string, unknown>;
        await updateCustomData(tx, tenant.id, user.id, customData, now);
        await this.audit.record(withEm(scope, tx), {
          action: 'UserCustomDataChanged', target,
          details: { keys: Object.keys(customData).slice(0, 50), bytes: Buffer.byteLength(customDataJson, 'utf8') },
        });
      }
      const profile = await applyProfileChange(withEm(scope, tx), this.audit, user, { name: change.name, picture: change.picture }, now);
      if (role === user.role && status === user.status) return { ...user, customData, ...profile };
      await updateRoleAndStatus(tx, tenant.id, user.id, role, status, now);
      if (role !== user.role) {
        await this.audit.record(withEm(scope, tx), { action: 'UserRoleChanged', target, details: { email: user.email, from: user.role, to: role } });
      }
      if (status !== user.status) {
        const suspended = status === 'Suspended';
        const sessionsEnded = suspended ? await this.sessions.revokeAllForUser(withEm(scope, tx), user.id, 'user_suspended') : 0;
        await this.audit.record(withEm(scope, tx), {
          action: suspended ? 'UserSuspended' : 'UserReactivated', target,
          details: { email: user.email, from: user.status, ...(suspended ? { sessionsEnded } : {}) },
        });
      }
      return { ...user, role, status, customData, ...profile, updatedAt: now };
    });
  }
}
