import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User, UserRole } from '../../entities/user.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import { actingAs, asSystem, withEm, type AuditScope, type RequestScope, type TenantScope } from '../../lib/request-scope.js';
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from '../../security/access-token.js';
import type { Keyring } from '../../security/keyring.js';
import { randomToken, sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { findLiveUserById } from '../../queries/user.js';
import { deleteExpiredRefreshAnswers, findUsableRefreshAnswer, insertRefreshAnswer } from '../../queries/refresh-answer.js';
import {
  findLiveSessionOfToken, findPresentedToken, rotateRefreshToken, type SessionUser,
} from '../../queries/refresh-token.js';
import {
  findLiveSessionAuthentication, findLiveSessionAuthenticationWithToken, findLiveSessionsOfUser, insertSessionWithFirstToken, revokeLiveSession, revokeLiveSessionsOfUser,
} from '../../queries/session.js';
import { SESSION_ERRORS } from '../../errors/session.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';
import { USER_ERRORS } from '../../errors/user.js';
import { TENANT_ERRORS } from '../../errors/tenant.js';
import { findLiveTenantBySlug } from '../../queries/tenant.js';


/**
 * When a refresh token issued now expires: the workspace's `sessionPolicy.refreshTokenLifetimeSeconds`
 * (default 30 days) from `now`, for a session's first token and each successor alike.
 */
function refreshTokenExpiry(tenant: Pick<Tenant, 'refreshTokenLifetimeSeconds'>, now: Date): Date {
  return new Date(now.getTime() + tenant.refreshTokenLifetimeSeconds * 1000);
}

/** What a sign-in hands the client (the `Session` schema of the OpenAPI document, without `user`). */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiresIn: number;
  refreshTokenExpiresIn: number;
  sessionId: string;
}

/** Why a session family ended; stored in `session.revoked_reason`. */
export type RevokeReason =
  | 'logout'
  | 'logout_all'
  | 'refresh_token_reused'
  | 'user_deleted'
  | 'user_suspended'
  | 'password_changed'
  | 'password_reset'
  | 'tenant_deleted'
  | 'account_taken_over'
  | 'session_revoked_by_user'
  | 'session_revoked_by_admin';

/** An application the session signed in to through the tenant's OpenID Provider. */
export interface ApplicationSignIn {
  clientId: string;
  /** The application's name; null once the application was deleted. */
  name: string | null;
  lastSignedInAt: Date;
}

/**
 * The OpenID Provider's state that ends with hosted sessions (docs/oidc.md "Sessions end everywhere");
 * implemented by the oidc feature, called in the caller's transaction.
 */
export interface ProviderSessionEnder {
  /** Deletes every provider session, grant, code and token of the user. */
  endAllOfUser(em: EntityManager, tenantId: string, userId: string): Promise<void>;
  /** When the session signed in at the provider, ends every provider session and grant of its user; @returns whether it had. */
  endSignedInBy(em: EntityManager, tenantId: string, sessionId: string): Promise<boolean>;
  /** The application sign-ins of each hosted session of the user, keyed by session id. */
  applicationSignIns(em: EntityManager, tenantId: string, userId: string): Promise<Map<string, ApplicationSignIn[]>>;
}

/** One live session as the session list shows it (docs/api-rules.md "Sessions of a user"). */
export interface LiveSession {
  id: string;
  createdAt: Date;
  /** The last refresh, or `createdAt` when never refreshed. */
  lastUsedAt: Date;
  ip: string | null;
  userAgent: string | null;
  /** How the session was authenticated; null for sessions older than the column. */
  method: string | null;
  /** The applications this session signed in to through the tenant's OpenID Provider, newest first. */
  applications: ApplicationSignIn[];
}

/** How long the answer of a refresh with an `Idempotency-Key` is given again, in seconds. */
export const REFRESH_ANSWER_TTL_SECONDS = 60;

/** What a kept refresh answer holds (encrypted in `refresh_answer.answer`). */
interface StoredAnswer {
  userId: string;
  tokens: IssuedTokens;
}

type RotationOutcome =
  | { kind: 'issued'; tokens: IssuedTokens; user: SessionUser }
  | { kind: 'owner_gone'; tenantId: string; sessionId: string }
  | { kind: 'not_rotated' };

/**
 * Sessions and their rotating refresh tokens (docs/api-rules.md "Credentials and sessions", RFC 6749 §6 and §10.4,
 * OAuth 2.0 Security BCP refresh-token rotation with reuse detection).
 */
export class SessionService {
  constructor(
    private readonly config: Config,
    private readonly audit: AuditService,
    private readonly keyring: Keyring,
    private readonly providerSessions: ProviderSessionEnder,
  ) {}

  /**
   * Starts a session for `user`: a new family with its first refresh token, `lastLoginAt` updated,
   * `authenticatedAt` set to now (every start follows a password, provider or factor check; see
   * docs/mfa.md "Recent sign-in"), and `SessionCreated` audited with the user as its actor. Call
   * inside the transaction of the sign-in it belongs to (`scope.em`); the session records the
   * scope's IP, user agent and language.
   * @param method how the user was authenticated (`password`, `password+totp`, `idp`, …), shown by
   *   the session list (docs/api-rules.md "Sessions of a user").
   */
  async start(scope: TenantScope, user: User, method: string): Promise<IssuedTokens> {
    const { em, tenant, meta } = scope;
    const now = new Date();
    const sessionId = randomUUID();
    const refreshToken = randomToken(32);
    await insertSessionWithFirstToken(em, {
      id: sessionId, tenantId: tenant.id, userId: user.id, ip: meta.ip, userAgent: meta.userAgent, method, now, locale: meta.locale,
      firstToken: { id: randomUUID(), tokenHash: sha256Hex(refreshToken), expiresAt: refreshTokenExpiry(tenant, now) },
    });
    user.lastLoginAt = now;
    if (meta.locale) user.locale = meta.locale;
    await this.audit.record(actingAs(scope, user.id), { action: 'SessionCreated', target: { type: 'session', id: sessionId } });
    return this.tokens(tenant, user.id, user.role, sessionId, refreshToken);
  }

  /**
   * Exchanges a refresh token for a new pair (docs/api-rules.md "Credentials and sessions"). The presented token is
   * rotated by a conditional UPDATE, so of two concurrent exchanges exactly one wins; the loser is
   * treated as a replay. Manages its own transactions: call it outside one.
   *
   * The workspace is found by its slug in the rotation's own statement: a refresh is one round trip
   * to the database (docs/performance.md "The refresh path"); only a refused one reads more, to say why.
   *
   * With an `idempotencyKey` (the `Idempotency-Key` header, IETF httpapi Idempotency-Key draft) the
   * rotation and the encrypted answer are committed together, and a retry with the same key and the
   * same token within {@link REFRESH_ANSWER_TTL_SECONDS} gets that answer again (the same pair, no
   * second successor) while the session is live and the issued refresh token is still unused. A
   * concurrent exchange with the same key waits for the winner and gets its answer too. Any other
   * presentation of a rotated token (no key, another key, a later one) is a replay.
   * @param tenantSlug the `{tenantSlug}` of the path.
   * @param idempotencyKey 1 to 255 visible ASCII characters, already checked by the router.
   * @returns the new tokens and the user they belong to.
   * @throws ApiError 404 `tenant_not_found` for an unknown or deleted workspace; 401 `invalid_token`
   *   (unknown), `refresh_token_expired`, `session_revoked`, `refresh_token_reused` (a rotated token
   *   presented again: the whole family is revoked and `SessionFamilyCompromised` audited); a deleted
   *   or suspended user's session is revoked (`session_revoked`); a `Pending` user gets
   *   `email_not_verified` and the token is not rotated.
   */
  async refresh(
    em: EntityManager,
    tenantSlug: string,
    presented: string,
    meta: RequestMeta,
    idempotencyKey?: string,
  ): Promise<{ tokens: IssuedTokens; user: SessionUser }> {
    const tokenHash = sha256Hex(presented);
    if (idempotencyKey === undefined) {
      const outcome = await this.rotate(em, tenantSlug, tokenHash);
      return this.settle(em, tenantSlug, tokenHash, meta, outcome);
    }
    // A keyed refresh may be a retry: its kept answer is looked up (and kept) by workspace.
    const tenant = await this.liveTenant(em, tenantSlug);
    const answerKey = sha256Hex(`${tokenHash}\u0000${idempotencyKey}`);
    const again = await this.storedAnswer(em, tenant, answerKey);
    if (again) return again;
    const outcome = await em.transactional((tx) => this.rotate(tx, tenantSlug, tokenHash, answerKey));
    if (outcome.kind === 'not_rotated') {
      // A concurrent exchange with the same key won the rotation and committed its answer.
      const answered = await this.storedAnswer(em, tenant, answerKey);
      if (answered) return answered;
    }
    return this.settle(em, tenantSlug, tokenHash, meta, outcome);
  }

  /** The answer of a rotation: its tokens, or the session of a deleted owner revoked, or why nothing was rotated. */
  private async settle(
    em: EntityManager, tenantSlug: string, tokenHash: string, meta: RequestMeta, outcome: RotationOutcome,
  ): Promise<{ tokens: IssuedTokens; user: SessionUser }> {
    if (outcome.kind === 'issued') return { tokens: outcome.tokens, user: outcome.user };
    if (outcome.kind === 'owner_gone') {
      await this.revokeSession(asSystem({ em, tenant: { id: outcome.tenantId }, meta }), outcome.sessionId, 'user_deleted');
      throw SESSION_ERRORS.sessionRevoked();
    }
    return this.explainRefreshFailure(em, await this.liveTenant(em, tenantSlug), tokenHash, meta);
  }

  private async liveTenant(em: EntityManager, tenantSlug: string): Promise<Tenant> {
    const tenant = await findLiveTenantBySlug(em, tenantSlug);
    if (!tenant) throw TENANT_ERRORS.tenantNotFound();
    return tenant;
  }

  /**
   * Rotates the token of `tokenHash` in the workspace of `tenantSlug` and issues its successor; with
   * `answerKey` (inside the caller's transaction) also stores the encrypted answer for idempotent retries.
   */
  private async rotate(em: EntityManager, tenantSlug: string, tokenHash: string, answerKey?: string): Promise<RotationOutcome> {
    const now = new Date();
    const successor = randomToken(32);
    const successorId = randomUUID();
    const rotation = await rotateRefreshToken(em, tenantSlug, tokenHash, { id: successorId, tokenHash: sha256Hex(successor) }, now);
    if (!rotation) return { kind: 'not_rotated' };
    const { sessionId, tenant, owner: user } = rotation;
    if (!user) return { kind: 'owner_gone', tenantId: tenant.id, sessionId };
    const tokens = this.tokens(tenant, user.id, user.role, sessionId, successor);
    if (answerKey) {
      const answer: StoredAnswer = { userId: user.id, tokens };
      await insertRefreshAnswer(em, {
        keyHash: answerKey, tenantId: tenant.id, sessionId, successorId,
        answer: this.keyring.encrypt(JSON.stringify(answer), `refresh-answer:${answerKey}`), createdAt: now,
        expiresAt: new Date(now.getTime() + REFRESH_ANSWER_TTL_SECONDS * 1000),
      });
    }
    return { kind: 'issued', tokens, user };
  }

  /**
   * The answer kept for `answerKey`, while it is younger than {@link REFRESH_ANSWER_TTL_SECONDS}, its
   * session is live and the refresh token it issued has not been used (once the client used it, the
   * client had the answer: presenting the old token again is a replay).
   */
  private async storedAnswer(em: EntityManager, tenant: Tenant, answerKey: string): Promise<{ tokens: IssuedTokens; user: SessionUser } | undefined> {
    const stored = await findUsableRefreshAnswer(em, tenant.id, answerKey, new Date());
    if (stored === undefined) return undefined;
    let answer: StoredAnswer;
    try {
      answer = JSON.parse(this.keyring.decrypt(stored, `refresh-answer:${answerKey}`)) as StoredAnswer;
    } catch {
      // Kept under a key that has since left ENCRYPTION_KEYS (the answer lives 60 s, not worth re-encrypting).
      return undefined;
    }
    const user = await findLiveUserById(em, tenant.id, answer.userId);
    if (!user || user.status === 'Suspended') return undefined;
    return { tokens: answer.tokens, user };
  }

  /**
   * Deletes the kept refresh answers whose {@link REFRESH_ANSWER_TTL_SECONDS} passed (the job worker's
   * periodic sweep; a kept answer past its time is never given, the sweep only frees the rows).
   * @returns how many rows were deleted.
   */
  async purgeExpiredAnswers(em: EntityManager, now = new Date()): Promise<number> {
    return deleteExpiredRefreshAnswers(em, now);
  }

  private async explainRefreshFailure(em: EntityManager, tenant: Tenant, tokenHash: string, meta: RequestMeta): Promise<never> {
    const row = await findPresentedToken(em, tenant.id, tokenHash);
    if (!row) throw SESSION_ERRORS.invalidRefreshToken();
    if (row.rotatedAt) {
      await em.transactional(async (tx) => {
        const system = asSystem({ em: tx, tenant, meta });
        const revoked = await this.revokeSession(system, row.sessionId, 'refresh_token_reused');
        if (!revoked) return;
        await this.audit.record(system, {
          action: 'SessionFamilyCompromised', target: { type: 'session', id: row.sessionId }, details: { userId: row.userId, refreshTokenId: row.id },
        });
      });
      throw SESSION_ERRORS.refreshTokenReused();
    }
    if (row.revokedAt) throw SESSION_ERRORS.sessionRevoked();
    if (row.userStatus === 'Pending' && new Date(row.expiresAt).getTime() > Date.now()) {
      throw SIGN_IN_ERRORS.emailNotVerified();
    }
    throw SESSION_ERRORS.refreshTokenExpired();
  }

  /**
   * Ends the session a refresh token belongs to (auth/logout). Unknown, foreign or already-ended
   * tokens are ignored so the answer reveals nothing. Runs in its own transaction (nested when
   * `scope.em` is in one); the session's user is the actor of its `SessionRevoked` and `UserLogout`.
   * @returns true when a live session was ended.
   */
  async endByRefreshToken(scope: TenantScope, presented: string): Promise<boolean> {
    return scope.em.transactional((tx) => this.endByRefreshTokenIn(withEm(scope, tx), presented));
  }

  private async endByRefreshTokenIn(scope: TenantScope, presented: string): Promise<boolean> {
    const row = await findLiveSessionOfToken(scope.em, scope.tenant.id, sha256Hex(presented));
    if (!row) return false;
    const byOwner = actingAs(scope, row.userId);
    const ended = await this.revokeSession(byOwner, row.id, 'logout');
    if (ended) {
      await this.audit.record(byOwner, { action: 'UserLogout', target: { type: 'user', id: row.userId }, details: { sessionId: row.id } });
    }
    return ended;
  }

  /**
   * Revokes one live session of the scope's workspace, with the scope's entity manager, and audits
   * `SessionRevoked` with its actor and metadata (`details.reason`, and `details.userId` when
   * `ownerId` scopes it). When the session ever signed in at the tenant's OpenID Provider, every
   * provider session, grant and token of its user ends too (docs/oidc.md "Sessions end everywhere").
   * @param ownerId when given, only a session of that user is revoked.
   * @returns false when it had already ended (or is not that owner's).
   */
  async revokeSession(scope: AuditScope, sessionId: string, reason: RevokeReason, ownerId?: string): Promise<boolean> {
    const { em, tenant } = scope;
    if (!(await revokeLiveSession(em, tenant.id, sessionId, reason, ownerId))) return false;
    await this.providerSessions.endSignedInBy(em, tenant.id, sessionId);
    await this.audit.record(scope, {
      action: 'SessionRevoked', target: { type: 'session', id: sessionId }, details: ownerId === undefined ? { reason } : { reason, userId: ownerId },
    });
    return true;
  }

  /**
   * The live (not revoked) sessions of one user of the tenant, newest first (docs/api-rules.md
   * "Sessions of a user"). `lastUsedAt` is the last refresh, or the start when never refreshed:
   * authenticated requests do not write to the session row. `applications` lists what each session
   * signed in to through the tenant's OpenID Provider.
   */
  async listLive(em: EntityManager, tenantId: string, userId: string): Promise<LiveSession[]> {
    const rows = await findLiveSessionsOfUser(em, tenantId, userId);
    const signIns = rows.length === 0 ? new Map<string, ApplicationSignIn[]>() : await this.providerSessions.applicationSignIns(em, tenantId, userId);
    return rows.map((row) => ({
      id: row.id,
      createdAt: new Date(row.createdAt),
      lastUsedAt: new Date(row.lastRefreshedAt ?? row.createdAt),
      ip: row.ip,
      userAgent: row.userAgent,
      method: row.method,
      applications: signIns.get(row.id) ?? [],
    }));
  }

  /**
   * {@link listLive} for the admin route `users/{userId}/sessions`.
   * @throws ApiError 404 `not_found` when the user is not a live user of the tenant.
   */
  async listLiveOfLiveUser(em: EntityManager, tenantId: string, userId: string): Promise<LiveSession[]> {
    if (!(await findLiveUserById(em, tenantId, userId))) throw USER_ERRORS.userNotFound();
    return this.listLive(em, tenantId, userId);
  }

  /**
   * When a live session last proved who its user is (sign-in with password, factor, passkey or
   * provider; refreshing does not renew it) and by which method; undefined for an ended session.
   */
  async authenticationOf(em: EntityManager, tenantId: string, sessionId: string): Promise<{ authenticatedAt: Date; method: string | null } | undefined> {
    const row = await findLiveSessionAuthentication(em, tenantId, sessionId);
    return row ? { authenticatedAt: new Date(row.authenticatedAt ?? row.createdAt), method: row.method } : undefined;
  }

  /**
   * {@link authenticationOf}, and whether `presented` is the session's current refresh token (not
   * rotated, not expired): proof that the caller holds the session itself, not only one of its access
   * tokens (docs/oidc.md "Sign-in"). One statement; the token is compared by its SHA-256 and not rotated.
   * @param presented the refresh token the caller sent, or undefined (`holdsRefreshToken` is then false).
   * @returns undefined for an ended or unknown session of the tenant.
   */
  async authenticationWithRefreshToken(
    em: EntityManager, tenantId: string, sessionId: string, presented: string | undefined,
  ): Promise<{ authenticatedAt: Date; method: string | null; holdsRefreshToken: boolean } | undefined> {
    const row = await findLiveSessionAuthenticationWithToken(em, tenantId, sessionId, presented === undefined ? null : sha256Hex(presented), new Date());
    return row ? { authenticatedAt: new Date(row.authenticatedAt ?? row.createdAt), method: row.method, holdsRefreshToken: row.holdsRefreshToken } : undefined;
  }

  /**
   * Ends one live session of one user of the scope's workspace (`DELETE me/sessions/{id}` and the
   * admin route); its access tokens fail at once (401 `session_revoked`) and its refresh token stops
   * working. Audits `SessionRevoked` with `details.reason` and `details.userId`, by the scope's actor.
   * @throws ApiError 404 `not_found` when the id is not a live session of that user in the tenant
   *   (another user's or tenant's session answers the same, so nothing is revealed).
   */
  async revokeOwnedSession(
    scope: RequestScope, userId: string, sessionId: string, reason: 'session_revoked_by_user' | 'session_revoked_by_admin',
  ): Promise<void> {
    const ended = await scope.em.transactional((tx) => this.revokeSession(withEm(scope, tx), sessionId, reason, userId));
    if (!ended) throw SESSION_ERRORS.sessionNotFound();
  }

  /**
   * Revokes every live session of a user of the scope's workspace (logout-all, deletion, suspension,
   * password change), each audited as `SessionRevoked` by the scope's actor, and deletes every
   * provider session, grant, code and token the user holds at the tenant's OpenID Provider
   * (docs/oidc.md "Sessions end everywhere"; also when no hosted session was live). Call inside the
   * transaction of the change it belongs to (`scope.em`).
   * @param exceptSessionId a session to keep, e.g. the one changing its own password.
   * @returns how many sessions were ended.
   */
  async revokeAllForUser(scope: AuditScope, userId: string, reason: RevokeReason, exceptSessionId?: string): Promise<number> {
    const { em, tenant } = scope;
    const ended = await revokeLiveSessionsOfUser(em, tenant.id, userId, reason, exceptSessionId);
    await this.providerSessions.endAllOfUser(em, tenant.id, userId);
    for (const id of ended) {
      await this.audit.record(scope, { action: 'SessionRevoked', target: { type: 'session', id }, details: { reason } });
    }
    return ended.length;
  }

  private tokens(tenant: Pick<Tenant, 'id' | 'refreshTokenLifetimeSeconds'>, userId: string, role: UserRole, sessionId: string, refreshToken: string): IssuedTokens {
    return {
      accessToken: signAccessToken({ sub: userId, tid: tenant.id, sid: sessionId, role }, this.config.jwtSecret),
      refreshToken,
      accessTokenExpiresIn: ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenExpiresIn: tenant.refreshTokenLifetimeSeconds,
      sessionId,
    };
  }
}
