import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import type { TenantScope } from '../../lib/request-scope.js';
import { randomToken, sha256Hex } from '../../security/tokens.js';
import type { PasswordSignInService, SignIn } from './password-sign-in-service.js';
import { findLiveUserById } from '../../queries/user.js';
import { factorMethodName, type LoginCodes, type MfaService, type SecondFactorMethod } from '../mfa/mfa-service.js';
import { isTotpEnrolled } from '../mfa/totp-service.js';
import {
  countChallengeAttempt, deleteChallengesOfUser, findChallengeState, findOpenChallengeEmail, insertChallenge, spendChallenge, type FirstFactor,
} from '../../queries/mfa-challenge.js';
import { SESSION_ERRORS } from '../../errors/session.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';
import { MFA_ERRORS } from '../../errors/mfa.js';

/** Seconds an `mfaToken` stays usable: 5 minutes. */
export const MFA_CHALLENGE_TTL_SECONDS = 300;
/** Wrong codes one `mfaToken` allows before it is spent. */
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5;

export type { FirstFactor };

/** A pending sign-in waiting for its second factor, as `mfa_required` hands it to the client. */
export interface IssuedMfaChallenge {
  /** Opaque, 256 random bits; stored only as its SHA-256 hash. */
  mfaToken: string;
  methods: SecondFactorMethod[];
  expiresInSeconds: number;
}

/**
 * The second step of a sign-in whose first factor did not involve a password (a provider sign-in
 * under an MFA policy, docs/idp.md "Second factor"): a short-lived (300 s), single-use token that
 * `auth/mfa/complete` exchanges, with a TOTP or email code, for a session. The token is stored only
 * hashed, bound to its tenant and user, and dies after {@link MFA_CHALLENGE_MAX_ATTEMPTS} wrong codes.
 * Its steps take the request's scope first (TenantScope: the workspace and the request metadata) and
 * audit as the user they identified (actingAs), or as `system` when nobody is identified (asSystem).
 */
export class MfaChallengeService {
  constructor(
    private readonly auth: PasswordSignInService,
    private readonly mfa: MfaService,
  ) {}

  /**
   * Issues a challenge for `user` after the first factor; earlier open challenges of the user end.
   * @returns the plaintext token (never stored) and the methods that can complete it.
   */
  async issue(em: EntityManager, tenant: Tenant, user: User, firstFactor: FirstFactor, issuer: string | null): Promise<IssuedMfaChallenge> {
    const token = randomToken(32);
    const now = new Date();
    await deleteChallengesOfUser(em, tenant.id, user.id);
    await insertChallenge(em, {
      id: randomUUID(), tenantId: tenant.id, userId: user.id, tokenHash: sha256Hex(token), firstFactor, issuer, createdAt: now,
      expiresAt: new Date(now.getTime() + MFA_CHALLENGE_TTL_SECONDS * 1000),
    });
    return { mfaToken: token, methods: this.methodsFor(user), expiresInSeconds: MFA_CHALLENGE_TTL_SECONDS };
  }

  /**
   * The email of the user an open challenge belongs to, or null (unknown, spent, expired, other
   * tenant), so `auth/mfa/complete` can run in the login brute-force budget of that account.
   */
  async accountEmailOf(em: EntityManager, tenant: Tenant, mfaToken: string): Promise<string | null> {
    return findOpenChallengeEmail(em, tenant.id, sha256Hex(mfaToken), new Date());
  }

  /** The factors that can complete a challenge of `user`: TOTP when enrolled, else the email code. */
  methodsFor(user: User): SecondFactorMethod[] {
    return isTotpEnrolled(user) ? ['totp'] : ['email'];
  }

  /**
   * `auth/mfa/complete`: checks the code against the challenge's user and, when right, spends the
   * token and starts the session (audits `MfaTotpVerified` / `MfaRecoveryCodeUsed` / `MfaEmailOtpVerified`,
   * `UserLogin` with `details.method` `idp+totp` / `idp+recovery_code` / `idp+email_otp`, `SessionCreated`). A wrong code is audited as
   * `UserLoginFailed`; the fifth one spends the token.
   * @throws ApiError 401 `invalid_token` (unknown, spent, other tenant, or the user is gone),
   *   401 `token_expired`, 401 `user_suspended`, 401 `invalid_mfa_code`.
   */
  async complete(scope: TenantScope, mfaToken: string, codes: LoginCodes): Promise<SignIn> {
    const { em, tenant } = scope;
    const tokenHash = sha256Hex(mfaToken);
    const now = new Date();
    const challenge = await countChallengeAttempt(em, tenant.id, tokenHash, MFA_CHALLENGE_MAX_ATTEMPTS, now);
    if (!challenge) return this.explainUnusable(em, tenant, tokenHash, now);
    const user = await findLiveUserById(em, tenant.id, challenge.userId);
    if (!user) {
      await this.spend(em, tenant.id, challenge.id);
      throw SESSION_ERRORS.invalidMfaToken();
    }
    if (user.status === 'Suspended') {
      await this.spend(em, tenant.id, challenge.id);
      throw SIGN_IN_ERRORS.userSuspended();
    }
    const methods = this.methodsFor(user);
    const accepted = await this.mfa.verifyAnyCode(scope, user, methods, codes);
    if (!accepted) {
      if (challenge.attempts >= MFA_CHALLENGE_MAX_ATTEMPTS) await this.spend(em, tenant.id, challenge.id);
      await this.mfa.recordFailedCode(scope, user, methods, { via: challenge.firstFactor });
      throw MFA_ERRORS.invalidMfaCodeRetry({ methods });
    }
    if (!(await this.spend(em, tenant.id, challenge.id))) throw SESSION_ERRORS.invalidMfaToken();
    const method = `${challenge.firstFactor}+${factorMethodName(accepted)}`;
    const tokens = await this.auth.completeSignIn(scope, user, method, challenge.issuer ? { issuer: challenge.issuer } : {});
    return { user, tokens };
  }

  /** Marks a challenge spent; false when it already was (a concurrent completion won). */
  private async spend(em: EntityManager, tenantId: string, id: string): Promise<boolean> {
    return spendChallenge(em, tenantId, id, new Date());
  }

  private async explainUnusable(em: EntityManager, tenant: Tenant, tokenHash: string, now: Date): Promise<never> {
    const row = await findChallengeState(em, tenant.id, tokenHash);
    if (row && !row.consumedAt && row.attempts < MFA_CHALLENGE_MAX_ATTEMPTS && new Date(row.expiresAt).getTime() <= now.getTime()) {
      throw SESSION_ERRORS.mfaTokenExpired();
    }
    throw SESSION_ERRORS.invalidMfaToken();
  }
}
