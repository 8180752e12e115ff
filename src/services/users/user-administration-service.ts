import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import { UserSchema, type User, type UserRole } from '../../entities/user.js';
import { conflict, notFound } from '../../lib/errors.js';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import { rowToEntity } from '../../db/rows.js';
import type { AuditService } from '../audit/audit-service.js';
import type { SessionService } from '../sessions/session-service.js';
import { SIGN_IN_REASONS } from '../sign-in/sign-in-errors.js';
import { USER_REASONS } from './user-errors.js';

/** The changes an admin makes to a user with PATCH users/{userId}. */
export interface UserAdministrationChange {
  role?: UserRole;
  /** `Suspended` ends every session at once; `Active` lets a suspended user sign in again. */
  status?: 'Active' | 'Suspended';
}

/**
 * An admin's changes to another user (docs/api-rules.md "Users and sign-up"): role and suspension.
 * The role is read from the database on every request, so a change applies to existing sessions at
 * once, both ways.
 */
export class UserAdministrationService {
  constructor(
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Applies a role and/or status change under a lock of the tenant's active admins, so two
   * concurrent demotions cannot remove the last two. Suspending ends every session of the user
   * (`SessionRevoked`, reason `user_suspended`). Audits `UserRoleChanged` (`details.from`, `to`),
   * `UserSuspended` or `UserReactivated`, with the acting admin or API key as actor and the user as
   * target; a change to what the user already has writes nothing.
   * @returns the user as stored afterwards.
   * @throws ApiError 404 unknown or deleted user, 409 `last_admin` (demoting or suspending the last
   *   active Admin), 409 `email_not_verified` (a `Pending` user becomes `Active` by verifying, not by an admin).
   */
  async change(em: EntityManager, tenant: Tenant, userId: string, change: UserAdministrationChange, actor: Actor, meta: RequestMeta): Promise<User> {
    return em.transactional(async (tx) => {
      const admins = (await tx.execute(
        `select id from app_user where tenant_id = ? and role = 'Admin' and status = 'Active' and deleted_at is null order by id for update`,
        [tenant.id],
      )) as { id: string }[];
      const rows = (await tx.execute('select * from app_user where id = ? and tenant_id = ? and deleted_at is null for update', [userId, tenant.id])) as Record<
        string,
        unknown
      >[];
      if (!rows[0]) throw notFound('User not found');
      const user = rowToEntity(tx, UserSchema, rows[0]);
      const role = change.role ?? user.role;
      const status = change.status ?? user.status;
      if (status === 'Active' && user.status === 'Pending') {
        throw conflict(SIGN_IN_REASONS.emailNotVerified, 'This user becomes active by verifying their email address');
      }
      const wasActiveAdmin = user.role === 'Admin' && user.status === 'Active';
      const staysActiveAdmin = role === 'Admin' && status === 'Active';
      if (wasActiveAdmin && !staysActiveAdmin && admins.length <= 1) {
        throw conflict(USER_REASONS.lastAdmin, 'The last active admin of a workspace cannot be demoted or suspended');
      }
      if (role === user.role && status === user.status) return user;
      const now = new Date();
      await tx.nativeUpdate(UserSchema, { id: user.id, tenantId: tenant.id }, { role, status, updatedAt: now });
      const target = { type: 'user', id: user.id };
      if (role !== user.role) {
        await this.audit.record(tx, { tenantId: tenant.id, action: 'UserRoleChanged', actor, target, meta, details: { email: user.email, from: user.role, to: role } });
      }
      if (status !== user.status) {
        const suspended = status === 'Suspended';
        const sessionsEnded = suspended ? await this.sessions.revokeAllForUser(tx, tenant.id, user.id, 'user_suspended', actor, meta) : 0;
        await this.audit.record(tx, {
          tenantId: tenant.id, action: suspended ? 'UserSuspended' : 'UserReactivated', actor, target, meta,
          details: { email: user.email, from: user.status, ...(suspended ? { sessionsEnded } : {}) },
        });
      }
      return { ...user, role, status, updatedAt: now };
    });
  }
}
