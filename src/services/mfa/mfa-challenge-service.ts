import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { unauthorized } from '../../lib/errors.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import { randomToken, sha256Hex } from '../../security/tokens.js';
import type { PasswordSignInService, SignIn } from '../sign-in/password-sign-in-service.js';
import { findLiveUserById } from '../users/user-lookup.js';
import { factorMethodName, type LoginCodes, type MfaService, type SecondFactorMethod } from './mfa-service.js';
import { isTotpEnrolled } from './totp-service.js';

/** Seconds an `mfaToken` stays usable: 5 minutes. */
export const MFA_CHALLENGE_TTL_SECONDS = 300;
/** Wrong codes one `mfaToken` allows before it is spent. */
export const MFA_CHALLENGE_MAX_ATTEMPTS = 5;

/** How the first factor of a pending sign-in was proved; only the external provider today. */
export type FirstFactor = 'idp';

/** A pending sign-in waiting for its second factor, as `mfa_required` hands it to the client. */
export interface IssuedMfaChallenge {
  /** Opaque, 256 random bits; stored only as its SHA-256 hash. */
  mfaToken: string;
  methods: SecondFactorMethod[];
  expiresInSeconds: number;
}

interface ChallengeRow {
  id: string;
  user_id: string;
  first_factor: FirstFactor;
  issuer: string | null;
  attempts: number;
}

/**
 * The second step of a sign-in whose first factor did not involve a password (a provider sign-in
 * under an MFA policy, docs/idp.md "Second factor"): a short-lived (300 s), single-use token that
 * `auth/mfa/complete` exchanges, with a TOTP or email code, for a session. The token is stored only
 * hashed, bound to its tenant and user, and dies after {@link MFA_CHALLENGE_MAX_ATTEMPTS} wrong codes.
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
    await em.execute('delete from mfa_challenge where tenant_id = ? and user_id = ?', [tenant.id, user.id]);
    await em.execute(
      `insert into mfa_challenge (id, tenant_id, user_id, token_hash, first_factor, issuer, attempts, created_at, expires_at, consumed_at)
       values (?, ?, ?, ?, ?, ?, 0, ?, ?, null)`,
      [randomUUID(), tenant.id, user.id, sha256Hex(token), firstFactor, issuer, now, new Date(now.getTime() + MFA_CHALLENGE_TTL_SECONDS * 1000)],
    );
    return { mfaToken: token, methods: this.methodsFor(user), expiresInSeconds: MFA_CHALLENGE_TTL_SECONDS };
  }

  /**
   * The email of the user an open challenge belongs to, or null (unknown, spent, expired, other
   * tenant), so `auth/mfa/complete` can run in the login brute-force budget of that account.
   */
  async accountEmailOf(em: EntityManager, tenant: Tenant, mfaToken: string): Promise<string | null> {
    const rows = (await em.execute(
      `select u.email from mfa_challenge c join app_user u on u.id = c.user_id and u.tenant_id = c.tenant_id
        where c.token_hash = ? and c.tenant_id = ? and c.consumed_at is null and c.expires_at > ?`,
      [sha256Hex(mfaToken), tenant.id, new Date()],
    )) as { email: string }[];
    return rows[0]?.email ?? null;
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
  async complete(em: EntityManager, tenant: Tenant, mfaToken: string, codes: LoginCodes, meta: RequestMeta): Promise<SignIn> {
    const tokenHash = sha256Hex(mfaToken);
    const now = new Date();
    const rows = (await em.execute(
      `update mfa_challenge set attempts = attempts + 1
        where token_hash = ? and tenant_id = ? and consumed_at is null and expires_at > ? and attempts < ?
        returning id, user_id, first_factor, issuer, attempts`,
      [tokenHash, tenant.id, now, MFA_CHALLENGE_MAX_ATTEMPTS],
    )) as ChallengeRow[];
    const challenge = rows[0];
    if (!challenge) return this.explainUnusable(em, tenant, tokenHash, now);
    const user = await findLiveUserById(em, tenant.id, challenge.user_id);
    if (!user) {
      await this.spend(em, challenge.id);
      throw unauthorized('invalid_token', 'The MFA token is not valid');
    }
    if (user.status === 'Suspended') {
      await this.spend(em, challenge.id);
      throw unauthorized('user_suspended', 'The account is suspended');
    }
    const methods = this.methodsFor(user);
    const accepted = await this.mfa.verifyAnyCode(em, tenant, user, methods, codes, meta);
    if (!accepted) {
      if (challenge.attempts >= MFA_CHALLENGE_MAX_ATTEMPTS) await this.spend(em, challenge.id);
      await this.mfa.recordFailedCode(em, tenant, user, methods, meta, { via: challenge.first_factor });
      throw unauthorized('invalid_mfa_code', 'The one-time code is not valid', { methods });
    }
    if (!(await this.spend(em, challenge.id))) throw unauthorized('invalid_token', 'The MFA token is not valid');
    const method = `${challenge.first_factor}+${factorMethodName(accepted)}`;
    const tokens = await this.auth.completeSignIn(em, tenant, user, method, meta, challenge.issuer ? { issuer: challenge.issuer } : {});
    return { user, tokens };
  }

  /** Marks a challenge spent; false when it already was (a concurrent completion won). */
  private async spend(em: EntityManager, id: string): Promise<boolean> {
    const spent = await em.execute('update mfa_challenge set consumed_at = ? where id = ? and consumed_at is null returning id', [new Date(), id]);
    return spent.length > 0;
  }

  private async explainUnusable(em: EntityManager, tenant: Tenant, tokenHash: string, now: Date): Promise<never> {
    const rows = (await em.execute('select consumed_at, expires_at, attempts from mfa_challenge where token_hash = ? and tenant_id = ?', [
      tokenHash, tenant.id,
    ])) as { consumed_at: Date | null; expires_at: Date; attempts: number }[];
    const row = rows[0];
    if (row && !row.consumed_at && row.attempts < MFA_CHALLENGE_MAX_ATTEMPTS && new Date(row.expires_at).getTime() <= now.getTime()) {
      throw unauthorized('token_expired', 'The MFA token has expired; sign in again');
    }
    throw unauthorized('invalid_token', 'The MFA token is not valid');
  }
}
