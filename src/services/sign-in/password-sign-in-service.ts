import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import { newUser } from '../../entities/new-user.js';
import type { User } from '../../entities/user.js';
import { normalizeEmail } from '../../lib/email.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { actingAs, asSystem, withEm, type TenantScope } from '../../lib/request-scope.js';
import { hashPassword, passwordNeedsRehash, verifyPassword } from '../../security/passwords.js';
import type { AuditService } from '../audit/audit-service.js';
import { factorMethodName, type LoginCodes, type MfaService } from '../mfa/mfa-service.js';
import type { IssuedTokens, SessionService } from '../sessions/session-service.js';
import { findLiveUserByEmail, insertUser, lockSignInPasswordHash, rehashPassword } from '../../queries/user.js';
import { assertMaySignIn, refuseSuspended } from '../account-policy/sign-in-eligibility.js';
import { assertMaySignUp } from '../account-policy/signup-policy.js';
import { assertPasswordAllowed } from '../account-policy/password-policy.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';

/** A signed-in user with the tokens of the new session. */
export interface SignIn {
  user: User;
  tokens: IssuedTokens;
}

/**
 * Password sign-up and sign-in (docs/api-rules.md "Credentials and sessions"). Its steps take the
 * request's scope first (TenantScope: the workspace and the request metadata) and audit as the user
 * they identified (actingAs), or as `system` when nobody is identified (asSystem).
 */
export class PasswordSignInService {
  constructor(
    private readonly sessions: SessionService,
    private readonly mfa: MfaService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Verifies email and password; an unknown email costs one hash too (docs/api-rules.md). Failures are
   * audited as `UserLoginFailed`.
   * @returns the user.
   * @throws ApiError 401 `invalid_credentials` (same text whether the email is unknown or the password
   *   wrong), 401 `user_suspended`.
   */
  async verifyCredentials(scope: TenantScope, email: string, password: string): Promise<User> {
    const { em, tenant } = scope;
    const user = await findLiveUserByEmail(em, tenant.id, email);
    const ok = await verifyPassword(user?.passwordHash ?? null, password);
    if (!user || !ok) {
      // an unknown email has no one behind it: the system refuses (docs/audit.md)
      await this.audit.record(user ? actingAs(scope, user.id) : asSystem(scope), {
        action: 'UserLoginFailed', target: user ? { type: 'user', id: user.id } : undefined, details: { email: normalizeEmail(email), reason: 'invalid_credentials' },
      });
      throw SIGN_IN_ERRORS.invalidCredentials();
    }
    refuseSuspended(user.status);
    if (user.passwordHash && passwordNeedsRehash(user.passwordHash)) {
      // An imported hash (docs/import.md) or weaker argon2 parameters: from now on argon2id.
      const rehashed = await hashPassword(password);
      if (await rehashPassword(em, tenant.id, user.id, user.passwordHash, rehashed)) user.passwordHash = rehashed;
    }
    return user;
  }

  /**
   * {@link verifyCredentials} for a step that signs the user in (login, TOTP initial steps): a
   * `Pending` user is refused too.
   * @throws ApiError 401 `invalid_credentials`, `user_suspended`, `email_not_verified`.
   */
  async verifySignInCredentials(scope: TenantScope, email: string, password: string): Promise<User> {
    const user = await this.verifyCredentials(scope, email, password);
    assertMaySignIn(user.status);
    return user;
  }

  /**
   * Starts the session of a user whose sign-in is complete, auditing `UserLogin` with
   * `details.method` (e.g. `password`, `password+totp`, `idp`, `idp+totp`) plus `details` and
   * `SessionCreated`, in one transaction. For a sign-in that checked the password (`password*`), the
   * user row is locked and the password must still be the one checked: a password reset, change or
   * provider takeover that committed in between (and ended every session) is not outrun by a
   * session started just after it.
   * @throws ApiError 401 `invalid_credentials` when the password changed (or the user was deleted or
   *   suspended) since it was checked.
   */
  async completeSignIn(
    scope: TenantScope, user: User, method: string, details: Record<string, unknown> = {},
  ): Promise<IssuedTokens> {
    const { em, tenant } = scope;
    return em.transactional(async (tx) => {
      if (method.startsWith('password')) await this.assertPasswordUnchanged(tx, tenant, user);
      await this.audit.record(actingAs(withEm(scope, tx), user.id), {
        action: 'UserLogin',
        target: { type: 'user', id: user.id },
        details: { method, ...details },
      });
      return this.sessions.start(withEm(scope, tx), user, method);
    });
  }

  /**
   * Locks the user row (`FOR UPDATE`, so it waits for a concurrent reset or takeover to commit) and
   * checks the stored password hash is still the one the sign-in verified.
   * @throws ApiError 401 `invalid_credentials` otherwise.
   */
  private async assertPasswordUnchanged(tx: EntityManager, tenant: Tenant, user: User): Promise<void> {
    const stored = await lockSignInPasswordHash(tx, tenant.id, user.id);
    if (!stored || stored.passwordHash === null || stored.passwordHash !== user.passwordHash) {
      throw SIGN_IN_ERRORS.invalidCredentials();
    }
  }

  /**
   * Password login (docs/api-rules.md "Credentials and sessions"): credentials, then the tenant MFA policy, then a new
   * session. Audits `UserLogin` (and `SessionCreated`).
   * @throws ApiError 401 `invalid_credentials`, `user_suspended`, `email_not_verified`, `mfa_required`,
   *   `invalid_mfa_code`.
   */
  async login(
    scope: TenantScope, input: { email: string; password: string } & LoginCodes,
  ): Promise<SignIn> {
    const user = await this.verifySignInCredentials(scope, input.email, input.password);
    const factor = await this.mfa.enforceAtLogin(scope, user, input);
    const method = factor === null ? 'password' : `password+${factorMethodName(factor)}`;
    const tokens = await this.completeSignIn(scope, user, method);
    return { user, tokens };
  }

  /**
   * Self-service sign-up as a `Member` (POST auth/signup in the OpenAPI document). The user is `Pending` when the tenant
   * requires email verification, `Active` otherwise. Audits `UserSignup` and `SessionCreated`.
   * @throws ApiError 403 `signup_disabled` / `signup_domain_not_allowed` (the tenant's sign-up policy),
   *   400 `password_too_short` / `password_too_common` (its password policy), 409 `email_taken` when the email already belongs to a user of the tenant.
   */
  async signup(scope: TenantScope, email: string, password: string): Promise<SignIn> {
    const { em, tenant } = scope;
    assertMaySignUp(tenant, normalizeEmail(email));
    assertPasswordAllowed(tenant, password);
    const passwordHash = await hashPassword(password);
    const now = new Date();
    const user = newUser({
      tenantId: tenant.id,
      email: normalizeEmail(email),
      passwordHash,
      status: tenant.requireEmailVerification ? 'Pending' : 'Active',
      role: 'Member',
      locale: scope.meta.locale ?? null,
    }, now);
    try {
      const tokens = await em.transactional(async (tx) => {
        await insertUser(tx, user);
        await this.audit.record(actingAs(withEm(scope, tx), user.id), {
          action: 'UserSignup',
          target: { type: 'user', id: user.id },
          details: { email: user.email, role: user.role, via: 'signup' },
        });
        return this.sessions.start(withEm(scope, tx), user, 'password');
      });
      return { user, tokens };
    } catch (err) {
      if (isUniqueViolation(err)) throw SIGN_IN_ERRORS.emailTaken();
      throw err;
    }
  }
}
