import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newUser } from '../../entities/new-user.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { isUniqueViolation } from '../../lib/errors.js';
import { isTotpEnrolled } from '../mfa/totp-service.js';
import { countPasskeysOfUser } from '../../queries/passkey.js';
import { actingAs, asSystem, withEm, type TenantScope } from '../../lib/request-scope.js';
import type { Keyring } from '../../security/keyring.js';
import { constantTimeEqual, sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { deleteIdentity, insertIdentity, lockIdentity, touchIdentityLogin } from '../../queries/idp-identity.js';
import type { MfaChallengeService } from '../sign-in/mfa-challenge-service.js';
import { MFA_ERRORS } from '../../errors/mfa.js';
import type { MfaService } from '../mfa/mfa-service.js';
import { isMember } from '../../queries/organization-membership.js';
import type { OrganizationMembershipService } from '../organizations/organization-membership-service.js';
import type { PasswordSignInService, SignIn } from '../sign-in/password-sign-in-service.js';
import type { AccountCredentialService } from '../lifecycle/account-credentials.js';
import { refuseSuspended } from '../account-policy/sign-in-eligibility.js';
import { findLiveUserByEmail, findUserById, insertUser, setEmailVerifiedByProvider } from '../../queries/user.js';
import { readSsoIdentity, type VerifiedSsoIdentity } from './sso-completion.js';
import { spendSsoCompletion } from '../../queries/sso-auth-request.js';
import type { SsoConnectionWithDomains } from '../../queries/sso-connection.js';
import { findConnection } from '../../queries/sso-connection.js';
import { SSO_ERRORS } from '../../errors/sso.js';

/** A completed single sign-on: the session, and where the browser asked to go afterwards. */
export interface SsoSignIn extends SignIn {
  returnTo: string | null;
}

/**
 * The end of an enterprise single sign-on (docs/sso.md "Who is signed in"): the browser that started
 * it brings the completion code; the verified identity becomes a user (found by its provider link,
 * or the account of that address, linked, or a new one), joins the connection's organization on
 * first sign-in, and gets a session under the workspace's MFA policy.
 * Its steps take the request's scope first (TenantScope: the workspace and the request metadata) and
 * audit as the user they identified (actingAs), or as `system` when nobody is identified (asSystem).
 */
export class SsoSignInService {
  constructor(
    private readonly keyring: Keyring,
    private readonly auth: PasswordSignInService,
    private readonly mfa: MfaService,
    private readonly challenges: MfaChallengeService,
    private readonly memberships: OrganizationMembershipService,
    private readonly credentials: AccountCredentialService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Spends the completion code (single use, 2 minutes) and signs the
   * person in. The code is accepted only from the browser that started the sign-in (its binding
   * cookie; no login CSRF with a code from another browser). MFA: when the workspace requires a
   * second factor of this user, the connection does not state that its provider performs MFA, and
   * the answer does not show it (OpenID Connect `amr`),
   * the answer is 401 `mfa_required` with an `mfaToken` for `auth/mfa/complete` (method `sso+…`).
   * Audits `UserLogin` (method `sso`) and `SessionCreated`; on a first sign-in also `UserSignup` or
   * `IdpOauthLinked`, and `OrganizationMemberAdded`.
   * @param presentedBinding the browser's binding cookie value, if any.
   * @throws ApiError 401 `sso_completion_invalid`, 401 `browser_mismatch`, 401 `user_suspended`,
   *   401 `sso_account_protected`, 401 `mfa_required`.
   */
  async complete(scope: TenantScope, code: string, presentedBinding: string | undefined): Promise<SsoSignIn> {
    const { em, tenant } = scope;
    const spent = await spendSsoCompletion(em, tenant.id, sha256Hex(code), new Date());
    if (!spent || spent.identityEnc === null || spent.purpose !== 'sign_in') throw SSO_ERRORS.completionInvalid();
    if (presentedBinding === undefined || !constantTimeEqual(sha256Hex(presentedBinding), spent.browserBindingHash)) throw SSO_ERRORS.browserMismatch();
    const connection = await findConnection(em, tenant.id, spent.connectionId);
    if (!connection) throw SSO_ERRORS.completionInvalid();
    const identity = readSsoIdentity(this.keyring, tenant.id, spent);
    let user: User;
    try {
      user = await this.resolve(scope, connection, identity);
    } catch (err) {
      // two first sign-ins of the same person at once: the loser finds the winner's link
      if (!isUniqueViolation(err)) throw err;
      user = await this.resolve(scope, connection, identity);
    }
    const providerMfa = connection.providerPerformsMfa || identity.providerMfa;
    if (this.mfa.requiredMethods(tenant, user).length > 0 && !this.providerMfaAccepted(tenant, user, connection, identity)) {
      const challenge = await this.challenges.issue(em, tenant, user, 'sso', identity.issuer);
      throw MFA_ERRORS.mfaRequiredAfterProvider(challenge);
    }
    const tokens = await this.auth.completeSignIn(scope, user, 'sso', {
      issuer: identity.issuer, connectionId: connection.id, ...(providerMfa ? { providerMfa: true } : {}),
    });
    return { user, tokens, returnTo: spent.returnTo };
  }

  /**
   * Whether the provider's sign-in satisfies the workspace's MFA policy for `user` (docs/sso.md
   * "MFA"): the connection states its provider asks for a second factor, or the answer shows it
   * (`amr`). A factor the person enrolled here (TOTP) is never waived by a connection's statement,
   * which any Admin can make (a second Admin's connection must not sign in as the owner past her
   * authenticator); only an `amr` showing MFA waives it, and only when the workspace opted in
   * (`idpMfaTrust`), as for the workspace's provider (docs/idp.md "MFA").
   */
  private providerMfaAccepted(tenant: Tenant, user: User, connection: SsoConnectionWithDomains, identity: VerifiedSsoIdentity): boolean {
    if (!connection.providerPerformsMfa && !identity.providerMfa) return false;
    if (!isTotpEnrolled(user)) return true;
    return identity.providerMfa && tenant.idpMfaTrust;
  }

  /**
   * The user of a verified identity, in one transaction: the live user linked to (issuer, subject);
   * else the live account of the address, linked (an address never verified is taken over as by a
   * provider sign-in: every credential of the pre-registration goes, docs/idp.md "Pre-registered
   * accounts"; unless it is an Admin or has its own factor: 401 `sso_account_protected`); else a new Active Member with the address verified. A newly linked person joins the
   * connection's organization with its default roles (roles deleted since are left out).
   * @throws ApiError 401 `user_suspended`, 401 `sso_account_protected`.
   */
  private async resolve(scope: TenantScope, connection: SsoConnectionWithDomains, identity: VerifiedSsoIdentity): Promise<User> {
    const { tenant } = scope;
    return scope.em.transactional(async (tx) => {
      const inTx = withEm(scope, tx);
      const now = new Date();
      let user = await this.linkedUser(tx, tenant.id, identity);
      if (!user) {
        const existing = await findLiveUserByEmail(tx, tenant.id, identity.email);
        user = existing ?? (await this.createMember(inTx, identity, now));
        refuseSuspended(user.status);
        if (existing && existing.emailVerifiedAt === null) {
          // as at the workspace's provider (docs/idp.md "Pre-registered accounts"): whoever holds an
          // Admin role or a factor proved more than a pre-registrant; such an account is not taken over
          if (existing.role === 'Admin' || isTotpEnrolled(existing) || (await countPasskeysOfUser(tx, tenant.id, existing.id)) > 0) {
            throw SSO_ERRORS.protectedAccount();
          }
          await this.takeOverUnverified(inTx, existing, identity, now);
        }
        await insertIdentity(tx, {
          id: randomUUID(), tenantId: tenant.id, userId: user.id, issuer: identity.issuer, subject: identity.subject, email: identity.email,
          createdAt: now, lastLoginAt: now,
        });
        await this.audit.record(actingAs(inTx, user.id), {
          action: 'IdpOauthLinked', target: { type: 'user', id: user.id },
          details: { issuer: identity.issuer, subject: identity.subject, email: user.email, via: existing ? 'sso_existing_account' : 'sso_new_user', connectionId: connection.id },
        });
        if (connection.organizationId !== null && !(await isMember(tx, tenant.id, connection.organizationId, user.id))) {
          // the connection's default roles: granted by the system, not by the person
          await this.memberships.join(asSystem(inTx), connection.organizationId, user.id, connection.defaultOrganizationRoles, { ssoConnectionId: connection.id });
        }
      }
      refuseSuspended(user.status);
      await touchIdentityLogin(tx, tenant.id, identity.issuer, identity.subject, now);
      return user;
    });
  }

  /** The live user linked to the identity, or null; a link to a deleted user is removed. */
  private async linkedUser(tx: EntityManager, tenantId: string, identity: VerifiedSsoIdentity): Promise<User | null> {
    const link = await lockIdentity(tx, tenantId, identity.issuer, identity.subject);
    if (!link) return null;
    const user = await findUserById(tx, tenantId, link.userId);
    if (user && user.deletedAt === null) return user;
    await deleteIdentity(tx, tenantId, link.id);
    return null;
  }

  /** A new Active Member without a password, the address verified by the provider. Audits `UserSignup`. */
  private async createMember(scope: TenantScope, identity: VerifiedSsoIdentity, now: Date): Promise<User> {
    const user = newUser({
      tenantId: scope.tenant.id, email: identity.email, passwordHash: null, status: 'Active', role: 'Member', emailVerifiedAt: now, locale: scope.meta.locale ?? null,
    }, now);
    await insertUser(scope.em, user);
    await this.audit.record(actingAs(scope, user.id), {
      action: 'UserSignup', target: { type: 'user', id: user.id },
      details: { email: identity.email, role: user.role, via: 'sso', issuer: identity.issuer },
    });
    return user;
  }

  /**
   * The connection's provider proved the address a pre-registration never did: every credential,
   * factor and session of the pre-registration goes (AccountCredentialService.clearAll), the address
   * is verified and a `Pending` account becomes `Active`. Audits `UserEmailVerified`.
   */
  private async takeOverUnverified(scope: TenantScope, user: User, identity: VerifiedSsoIdentity, now: Date): Promise<void> {
    const cleared = await this.credentials.clearAll(asSystem(scope), user.id, 'account_taken_over');
    await setEmailVerifiedByProvider(scope.em, scope.tenant.id, user.id, now);
    Object.assign(user, {
      passwordHash: null, totpSecretEnc: null, totpEnrolledAt: null, totpPendingSecretEnc: null, totpLastUsedStep: null,
      emailVerifiedAt: now, status: user.status === 'Pending' ? 'Active' : user.status,
    } satisfies Partial<User>);
    await this.audit.record(actingAs(scope, user.id), {
      action: 'UserEmailVerified', target: { type: 'user', id: user.id },
      details: { email: user.email, via: 'sso', reclaimed: true, sessionsEnded: cleared.sessionsEnded, issuer: identity.issuer },
    });
  }
}
