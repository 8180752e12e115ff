import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Invite, InviteStatus } from '../../entities/invite.js';
import type { Tenant } from '../../entities/tenant.js';
import { newUser } from '../../entities/new-user.js';
import type { User, UserRole } from '../../entities/user.js';
import { normalizeEmail } from '../../lib/email.js';
import { isUniqueViolation, REQUEST_ERRORS } from '../../lib/errors.js';
import type { RequestMeta } from '../../lib/request-meta.js';
import { actingAs, asSystem, withEm, type RequestScope, type TenantScope } from '../../lib/request-scope.js';
import { isUuid } from '../../lib/uuid.js';
import { hashPassword } from '../../security/passwords.js';
import type { Keyring } from '../../security/keyring.js';
import { randomToken, sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import type { Mailer } from '../mail/mailer.js';
import { mailTranslator, momentInWords } from '../mail/mail-i18n.js';
import { renderMail } from '../mail/mail-layout.js';
import type { IssuedTokens, SessionService } from '../sessions/session-service.js';
import type { OrganizationMembershipService } from '../organizations/organization-membership-service.js';
import { assertPasswordAllowed } from '../account-policy/password-policy.js';
import { countLiveUsersWithEmail, findLiveUserById, insertUser } from '../../queries/user.js';
import { findLiveTenantById, lockTenantRow } from '../../queries/tenant.js';
import {
  acceptInvite, countInvitesSince, expireDueInvites, findInvite, findInviteByTokenHash, findInvitesOfTenant, insertInvite, lockInvite,
  revokeInvite, revokeOpenInvitesTo,
} from '../../queries/invite.js';
import { deleteExpiredInviteAnswers, findInviteAnswer, insertInviteAnswer } from '../../queries/invite-answer.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';
import { INVITE_ERRORS } from '../../errors/invite.js';

/** Default invite lifetime in seconds (7 days, docs/decisions.md "Invites"). */
export const INVITE_DEFAULT_TTL_SECONDS = 604_800;
/** Shortest and longest invite lifetime in seconds (5 minutes, 30 days). */
export const INVITE_MIN_TTL_SECONDS = 300;
export const INVITE_MAX_TTL_SECONDS = 2_592_000;
/** The window of the per-tenant invite limit (`INVITES_PER_TENANT_PER_DAY`): 24 hours, in seconds. */
export const INVITE_LIMIT_WINDOW_SECONDS = 86_400;

/**
 * How long the answer of an invite created with an `Idempotency-Key` is given again, in seconds
 * (24 hours; docs/api-rules.md "Users and sign-up").
 */
export const INVITE_ANSWER_TTL_SECONDS = 86_400;

/** An invite creation's key as kept: who asked with which key, and what they asked for. */
interface AnswerKey {
  /** SHA-256 of tenant, actor and key. */
  keyHash: string;
  /** SHA-256 of the request as it takes effect. */
  requestHash: string;
}

/**
 * The kept-answer key of a request with an `Idempotency-Key`: the key hash over the scope's tenant, the
 * caller (actor type and id) and the key, so one caller's keys never meet another's; the request hash
 * over `request` as JSON. POST invites hashes an array (its request as it takes effect), a resend an
 * object (`{ resendOf }`), so the two share the key space and a key of one never matches the other.
 */
function answerKeyOf(scope: RequestScope, idempotencyKey: string, request: unknown[] | { resendOf: string }): AnswerKey {
  const { tenant, actor } = scope;
  return {
    keyHash: sha256Hex([tenant.id, actor.type, actor.id ?? '', idempotencyKey].join('\u0000')),
    requestHash: sha256Hex(JSON.stringify(request)),
  };
}

/** What a kept invite answer holds (encrypted in `invite_answer.answer`); dates as ISO strings. */
interface StoredInviteAnswer {
  invite: Omit<Invite, 'createdAt' | 'expiresAt' | 'acceptedAt' | 'revokedAt'> & {
    createdAt: string; expiresAt: string; acceptedAt: string | null; revokedAt: string | null;
  };
  token: string;
}

/** Thrown inside an invite's transaction when a live answer holds its key: rolls the invite back. */
class AnswerKeyTaken extends Error {}

/**
 * Thrown inside a resend's transaction when the invite it sends again is no longer open or expired
 * (a concurrent resend or a revocation committed first); rolls the new invite and its mail back.
 */
class ResendTargetClosed extends Error {
  constructor(readonly status: InviteStatus) {
    super('the invite to send again is no longer open');
  }
}

/** The associated data of a kept invite answer's ciphertext. */
function inviteAnswerAad(keyHash: string): string {
  return `invite-answer:${keyHash}`;
}

/** What an admin asks for when inviting someone. */
export interface CreateInviteInput {
  email: string;
  role?: UserRole;
  /** Lifetime in seconds, 300 to 2592000; default 604800. */
  ttlSeconds?: number;
  /** The organization accepting makes the person a member of (docs/organizations.md "Invitations"). */
  organizationId?: string;
  /** Names of the organization roles the membership gets; needs `organizationId`. */
  organizationRoles?: string[];
  /** The invite this one sends again (recorded as `resendOf` in the `InviteCreated` audit event). */
  resendOf?: string;
}

/** Which closed invites a list includes besides the open and expired ones. */
export interface ListInvitesOptions {
  includeAccepted: boolean;
  includeRevoked: boolean;
}

/** The result of an accepted invite: the new user, their first session and their tenant. */
export interface AcceptedInvite {
  tenant: Tenant;
  user: User;
  tokens: IssuedTokens;
}

/**
 * Invitations (docs/decisions.md "Invites"): an admin invites an email with a
 * role; the invitee receives a mail with a one-time link and, by accepting it with a password,
 * becomes an `Active` user of the tenant and is signed in.
 * An Admin's operations take the request scope and audit with its actor; an acceptance audits as the
 * invited person (actingAs), an expiry as `system`.
 */
export class InviteService {
  constructor(
    private readonly config: Config,
    private readonly sessions: SessionService,
    private readonly mailer: Mailer,
    private readonly audit: AuditService,
    private readonly organizationMembers: OrganizationMembershipService,
    private readonly keyring: Keyring,
  ) {}

  /**
   * Creates an invite, audits `InviteCreated`, and mails the accept link (`PUBLIC_URL` +
   * `/app/{slug}/accept-invite?token=…`, a hosted page; docs/web.md). Open invites to the same email are revoked first (audited as
   * `InviteRevoked`, reason `superseded`), so only the newest link works. The mail is queued
   * (docs/events.md "Mail"): the job queue delivers it with retries, and the returned token can also
   * be handed over another way.
   * At most `INVITES_PER_TENANT_PER_DAY` invites per tenant in any 24 hours (counted from the invite
   * table under a lock of the tenant row, so instances and concurrent requests share it), so the
   * service cannot be used to mail arbitrary addresses in bulk (docs/security.md "Mail").
   * @param authorizeRole the caller's check that its credential may grant the invite's role and
   *   organization membership (an `ak_test_` key may invite Members only, into no organization:
   *   docs/security.md "Test keys"); it throws to refuse.
   * @returns the invite and its plaintext token (the only time the token is available).
   * With `organizationId` (and `organizationRoles`), accepting the invite also makes the person a
   * member of that organization with those roles (docs/organizations.md "Invitations"); such an
   * invite may go to the address of an existing account, which accepts it signed in ({@link acceptSignedIn}).
   * With an `idempotencyKey` (the `Idempotency-Key` header, IETF httpapi Idempotency-Key draft;
   * docs/api-rules.md "Users and sign-up") the answer is kept encrypted for {@link INVITE_ANSWER_TTL_SECONDS},
   * committed with the invite, and a retry by the same caller (user or API key) with the same key and
   * the same request gets it again: the same invite and token, no second invite, no second mail, no
   * second `InviteCreated`, nothing counted against the daily limit. A concurrent request with the
   * same key waits for the first and gets its answer.
   * @param idempotencyKey 1 to 255 visible ASCII characters, already checked by the router.
   * @throws ApiError 409 `idempotency_key_reused` when the caller's key was used with another request
   *   (another email, role, lifetime, organization or organization roles) within the window;
   *   409 `email_taken` when the email already belongs to a live user of the tenant
   *   (invites without an organization); 404 `not_found` for an unknown organization, 400 `unknown_organization_role`, 400
   *   `validation_failed` for `organizationRoles` without `organizationId`; 429 `rate_limited` (with `details.retryAfterSeconds`) when the tenant's daily invites are spent;
   *   whatever `authorizeRole` throws (403 `live_key_required`).
   */
  async create(
    scope: RequestScope, input: CreateInviteInput, authorizeRole: (role: UserRole, organizationId?: string) => void, idempotencyKey?: string,
  ): Promise<{ invite: Invite; token: string }> {
    const email = normalizeEmail(input.email);
    // the request as it takes effect: `A@x.org` and `a@x.org`, an omitted and the default role, are one request
    const answerKey = idempotencyKey === undefined ? undefined : answerKeyOf(scope, idempotencyKey, [
      email, input.role ?? 'Member', input.ttlSeconds ?? INVITE_DEFAULT_TTL_SECONDS, input.organizationId ?? null,
      input.organizationId ? [...new Set(input.organizationRoles ?? [])].sort() : [],
    ]);
    return this.createAnswering(scope, { ...input, email }, authorizeRole, answerKey);
  }

  /**
   * {@link create} once the request's answer key (if any) is known: POST invites and a resend each
   * hash their own request (see {@link answerKeyOf}). A live answer kept under `answerKey` is given
   * again (after `authorizeRole`); otherwise the invite is made, and its answer kept with it.
   * @param input `email` already normalised.
   * @throws as {@link create}.
   */
  private async createAnswering(
    scope: RequestScope, input: CreateInviteInput, authorizeRole: (role: UserRole, organizationId?: string) => void, answerKey: AnswerKey | undefined,
  ): Promise<{ invite: Invite; token: string }> {
    const { em, tenant, actor } = scope;
    authorizeRole(input.role ?? 'Member', input.organizationId);
    if (input.organizationRoles?.length && !input.organizationId) {
      throw INVITE_ERRORS.organizationRolesWithoutOrganization();
    }
    const email = input.email;
    if (answerKey) {
      const again = await this.keptAnswer(em, tenant.id, answerKey);
      if (again) return again;
    }
    const token = randomToken(32);
    const now = new Date();
    const invite: Invite = {
      id: randomUUID(),
      tenantId: tenant.id,
      email,
      role: input.role ?? 'Member',
      status: 'Open',
      tokenHash: sha256Hex(token),
      invitedByType: actor.type,
      invitedBy: actor.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + (input.ttlSeconds ?? INVITE_DEFAULT_TTL_SECONDS) * 1000),
      acceptedAt: null,
      acceptedUserId: null,
      revokedAt: null,
      organizationId: input.organizationId ?? null,
      organizationRoles: input.organizationId ? [...new Set(input.organizationRoles ?? [])] : [],
    };
    try {
      await this.createInTransaction(scope, invite, token, input.resendOf, answerKey);
    } catch (err) {
      if (err instanceof ResendTargetClosed) {
        // a concurrent resend of the same invite committed first: with this key, its answer is this one's
        const answered = answerKey ? await this.keptAnswer(em, tenant.id, answerKey) : undefined;
        if (answered) return answered;
        throw INVITE_ERRORS.notOpen({ status: err.status, action: 'sent again' });
      }
      if (!answerKey || !(err instanceof AnswerKeyTaken)) throw err;
      // A concurrent request with the same key committed first: its answer is this one's too.
      const answered = await this.keptAnswer(em, tenant.id, answerKey);
      // (only when its answer cannot be read any more: kept under a key that left ENCRYPTION_KEYS)
      if (!answered) throw INVITE_ERRORS.idempotencyKeyReused();
      return answered;
    }
    return { invite, token };
  }

  /**
   * The invite's transaction: the checks that need the database, the superseded invites revoked,
   * the invite inserted and audited, its mail queued and, with `answerKey`, the answer kept.
   * @throws AnswerKeyTaken when a live answer holds `answerKey`, ResendTargetClosed when `resendOf` is
   *   no longer open or expired under the tenant row's lock (everything is rolled back).
   */
  private async createInTransaction(
    scope: RequestScope, invite: Invite, token: string, resendOf: string | undefined, answerKey: AnswerKey | undefined,
  ): Promise<void> {
    const { em, tenant } = scope;
    const { email, createdAt: now } = invite;
    await em.transactional(async (tx) => {
      const inTx = withEm(scope, tx);
      if (invite.organizationId) await this.organizationMembers.checkInvitation(tx, tenant.id, invite.organizationId, invite.organizationRoles);
      // an invitation into an organization may go to a person who has an account (accepted signed in)
      const existing = invite.organizationId ? 0 : await countLiveUsersWithEmail(tx, tenant.id, email);
      if (existing > 0) throw SIGN_IN_ERRORS.emailTaken();
      await this.assertDailyInviteBudget(tx, tenant, now);
      if (resendOf) {
        // checked again under the tenant row's lock, which orders concurrent creations: of two
        // resends of one invite only the first sends, the second finds it revoked (superseded)
        const target = await findInvite(tx, tenant.id, resendOf);
        if (!target || (target.status !== 'Open' && target.status !== 'Expired')) throw new ResendTargetClosed(target?.status ?? 'Revoked');
      }
      const superseded = await revokeOpenInvitesTo(tx, tenant.id, email, now);
      for (const supersededId of superseded) {
        await this.audit.record(inTx, {
          action: 'InviteRevoked', target: { type: 'invite', id: supersededId }, details: { email, reason: 'superseded', supersededBy: invite.id },
        });
      }
      await insertInvite(tx, invite);
      await this.audit.record(inTx, {
        action: 'InviteCreated', target: { type: 'invite', id: invite.id },
        details: {
          email, role: invite.role, expiresAt: invite.expiresAt.toISOString(), ...(resendOf ? { resendOf } : {}),
          ...(invite.organizationId ? { organizationId: invite.organizationId, organizationRoles: invite.organizationRoles } : {}),
        },
      });
      await this.sendInviteMail(tx, tenant, invite, token);
      if (answerKey) await this.keepAnswer(tx, tenant.id, answerKey, invite, token);
    });
  }

  /**
   * Keeps the answer of a keyed creation, encrypted, in the invite's transaction.
   * @throws AnswerKeyTaken when a live answer holds the key (a concurrent request committed first).
   */
  private async keepAnswer(tx: EntityManager, tenantId: string, answerKey: AnswerKey, invite: Invite, token: string): Promise<void> {
    const answer = JSON.stringify({ invite, token });
    const createdAt = invite.createdAt;
    const kept = await insertInviteAnswer(tx, {
      keyHash: answerKey.keyHash, tenantId, inviteId: invite.id, requestHash: answerKey.requestHash,
      answer: this.keyring.encrypt(answer, inviteAnswerAad(answerKey.keyHash)), createdAt,
      expiresAt: new Date(createdAt.getTime() + INVITE_ANSWER_TTL_SECONDS * 1000),
    });
    if (!kept) throw new AnswerKeyTaken();
  }

  /**
   * The answer kept for the caller's key while it is younger than {@link INVITE_ANSWER_TTL_SECONDS}:
   * the invite as it was created and its token. Undefined when none is kept, or it cannot be
   * decrypted any more (its key left `ENCRYPTION_KEYS`).
   * @throws ApiError 409 `idempotency_key_reused` when the key was kept for another request.
   */
  private async keptAnswer(em: EntityManager, tenantId: string, answerKey: AnswerKey): Promise<{ invite: Invite; token: string } | undefined> {
    const kept = await findInviteAnswer(em, tenantId, answerKey.keyHash, new Date());
    if (!kept) return undefined;
    if (kept.requestHash !== answerKey.requestHash) throw INVITE_ERRORS.idempotencyKeyReused();
    let stored: StoredInviteAnswer;
    try {
      stored = JSON.parse(this.keyring.decrypt(kept.answer, inviteAnswerAad(answerKey.keyHash))) as StoredInviteAnswer;
    } catch {
      return undefined;
    }
    const { invite } = stored;
    return {
      token: stored.token,
      invite: {
        ...invite, createdAt: new Date(invite.createdAt), expiresAt: new Date(invite.expiresAt),
        acceptedAt: invite.acceptedAt === null ? null : new Date(invite.acceptedAt), revokedAt: invite.revokedAt === null ? null : new Date(invite.revokedAt),
      },
    };
  }

  /**
   * Deletes the kept invite answers whose {@link INVITE_ANSWER_TTL_SECONDS} passed (the job worker's
   * retention sweep; a kept answer past its time is never given, the sweep only frees the rows).
   * @returns how many rows were deleted.
   */
  async purgeExpiredAnswers(em: EntityManager, now = new Date()): Promise<number> {
    return deleteExpiredInviteAnswers(em, now);
  }

  /**
   * Sends an open or expired invite again (docs/api-rules.md "Users and sign-up"): a new invite to the same
   * email with the same role and a fresh default lifetime, through {@link create}, so the old token
   * dies at once (revoked as `superseded`), the new link is mailed, and the daily invite budget and
   * the `email_taken` check apply as to any invite. Audited `InviteCreated` with `resendOf`.
   * With an `idempotencyKey` (the `Idempotency-Key` header; docs/api-rules.md "Resending an invite") the
   * answer is kept as {@link create} keeps it (`invite_answer`, {@link INVITE_ANSWER_TTL_SECONDS}), for the
   * request "resend invite `inviteId`": a retry by the same caller with the same key and the same path
   * id gets the first resend's answer again (the same new invite and token; no third invite, no second
   * mail), looked up before the old invite's status is checked (the first resend revoked it). A
   * concurrent resend with the same key gets the first one's answer, as for {@link create}. Without a
   * key, of two concurrent resends of one invite only the first sends: the invite's status is checked
   * again under the tenant row's lock, and the second answers 409 `invite_not_open`.
   * @param inviteId the path's invite id (a UUID, any case).
   * @param authorizeRole as for {@link create}: checked against the invite's role before anything changes
   *   (on a replay, against the kept invite's role).
   * @param idempotencyKey 1 to 255 visible ASCII characters, already checked by the router.
   * @returns the new invite and its plaintext token.
   * @throws ApiError 404 `not_found` for an unknown id or another tenant's invite, 409
   *   `invite_not_open` for an accepted or revoked invite (without a kept answer), 409 `email_taken`,
   *   409 `idempotency_key_reused` when the caller's key was used within the window for another
   *   request (POST invites, or the resend of another invite), 429 `rate_limited`,
   *   whatever `authorizeRole` throws (403 `live_key_required`).
   */
  async resend(
    scope: RequestScope, inviteId: string, authorizeRole: (role: UserRole, organizationId?: string) => void, idempotencyKey?: string,
  ): Promise<{ invite: Invite; token: string }> {
    if (!isUuid(inviteId)) throw INVITE_ERRORS.inviteNotFound();
    const answerKey = idempotencyKey === undefined ? undefined : answerKeyOf(scope, idempotencyKey, { resendOf: inviteId.toLowerCase() });
    if (answerKey) {
      const again = await this.replay(scope, answerKey, authorizeRole);
      if (again) return again;
    }
    await this.expireDue(scope, inviteId);
    const previous = await findInvite(scope.em, scope.tenant.id, inviteId);
    if (!previous) throw INVITE_ERRORS.inviteNotFound();
    if (previous.status !== 'Open' && previous.status !== 'Expired') {
      // a concurrent resend with this key may have committed (and revoked it) since the first look
      const again = answerKey ? await this.replay(scope, answerKey, authorizeRole) : undefined;
      if (again) return again;
      throw INVITE_ERRORS.notOpen({ status: previous.status, action: 'sent again' });
    }
    return this.createAnswering(scope, {
      email: previous.email, role: previous.role, resendOf: previous.id,
      ...(previous.organizationId ? { organizationId: previous.organizationId, organizationRoles: previous.organizationRoles } : {}),
    }, authorizeRole, answerKey);
  }

  /**
   * The answer kept under `answerKey` (see {@link keptAnswer}), once `authorizeRole` allowed its invite's
   * role and organization (the credential's check runs before a replay, as in {@link create}).
   * @throws ApiError 409 `idempotency_key_reused` (from {@link keptAnswer}); whatever `authorizeRole` throws.
   */
  private async replay(
    scope: RequestScope, answerKey: AnswerKey, authorizeRole: (role: UserRole, organizationId?: string) => void,
  ): Promise<{ invite: Invite; token: string } | undefined> {
    const kept = await this.keptAnswer(scope.em, scope.tenant.id, answerKey);
    if (kept) authorizeRole(kept.invite.role, kept.invite.organizationId ?? undefined);
    return kept;
  }

  /**
   * Refuses a new invite when the tenant created `invitesPerTenantPerDay` in the last 24 hours.
   * Locks the tenant row, so concurrent creations are counted one after the other.
   * @throws ApiError 429 `rate_limited` with `details.retryAfterSeconds` (when the oldest counted invite leaves the window).
   */
  private async assertDailyInviteBudget(tx: EntityManager, tenant: Tenant, now: Date): Promise<void> {
    await lockTenantRow(tx, tenant.id);
    const since = new Date(now.getTime() - INVITE_LIMIT_WINDOW_SECONDS * 1000);
    const row = await countInvitesSince(tx, tenant.id, since);
    if (row.count < this.config.invitesPerTenantPerDay) return;
    const freesAt = new Date(row.oldest ?? now).getTime() + INVITE_LIMIT_WINDOW_SECONDS * 1000;
    throw REQUEST_ERRORS.rateLimited({ retryAfterSeconds: Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000)) });
  }

  /**
   * Mails the invitation in the workspace's default language and brand (the invitee has no
   * language of their own yet): the role, a button to accept, and until when it is valid. Queued in
   * `tx`, the invite's own transaction: no invite without its mail, no mail for an invite rolled back.
   */
  private async sendInviteMail(tx: EntityManager, tenant: Tenant, invite: Invite, token: string): Promise<void> {
    const link = `${this.config.publicUrl}/app/${encodeURIComponent(tenant.slug)}/accept-invite?token=${encodeURIComponent(token)}`;
    const ctx = this.mailer.contextFor(tenant, invite.email);
    const t = mailTranslator(ctx.locale);
    const values = { workspace: ctx.brand.workspace };
    const message = renderMail(ctx, t('invite.subject', values), [
      { kind: 'text', text: t(invite.role === 'Admin' ? 'invite.intro_Admin' : 'invite.intro_Member', values) },
      // the name is chosen by whoever created the workspace: quoted, defanged, never a link
      { kind: 'note', text: t('invite.notice') },
      { kind: 'action', label: t('invite.action'), url: link },
      { kind: 'text', text: t('invite.outro', { date: momentInWords(invite.expiresAt, ctx.locale) }) },
    ], 'invite');
    await this.mailer.send(message, tenant.id, tx);
  }

  /**
   * The tenant's invites, newest first: open and expired ones always, accepted and revoked ones on
   * request. Open invites past their expiry are marked `Expired` first (see {@link expireDue}).
   */
  async list(scope: TenantScope, options: ListInvitesOptions): Promise<Invite[]> {
    await this.expireDue(scope);
    const statuses: InviteStatus[] = ['Open', 'Expired'];
    if (options.includeAccepted) statuses.push('Accepted');
    if (options.includeRevoked) statuses.push('Revoked');
    return findInvitesOfTenant(scope.em, scope.tenant.id, statuses);
  }

  /**
   * Marks every open invite of the scope's workspace whose `expiresAt` has passed as `Expired` and
   * audits one `InviteExpired` per invite (actor `system`, the request's metadata). Runs lazily when
   * invites are listed or presented.
   * @param inviteId only that invite.
   * @returns how many invites expired now.
   */
  async expireDue(scope: TenantScope, inviteId?: string): Promise<number> {
    return scope.em.transactional(async (tx) => {
      const rows = await expireDueInvites(tx, scope.tenant.id, new Date(), inviteId);
      for (const row of rows) {
        await this.audit.record(asSystem(withEm(scope, tx)), {
          action: 'InviteExpired', target: { type: 'invite', id: row.id }, details: { email: row.email, expiredAt: new Date(row.expiresAt).toISOString() },
        });
      }
      return rows.length;
    });
  }

  /**
   * Revokes an open invite (its token stops working) and audits `InviteRevoked`. Revoking an
   * already revoked invite answers without change.
   * @throws ApiError 404 unknown id, 409 `invite_not_open` when it was accepted or has expired.
   */
  async revoke(scope: RequestScope, inviteId: string): Promise<void> {
    const { em, tenant } = scope;
    if (!isUuid(inviteId)) throw INVITE_ERRORS.inviteNotFound();
    await this.expireDue(scope, inviteId);
    await em.transactional(async (tx) => {
      const invite = await lockInvite(tx, tenant.id, inviteId);
      if (!invite) throw INVITE_ERRORS.inviteNotFound();
      if (invite.status === 'Revoked') return;
      if (invite.status !== 'Open') throw INVITE_ERRORS.notOpen({ status: invite.status, action: 'revoked' });
      await revokeInvite(tx, tenant.id, invite.id, new Date());
      await this.audit.record(withEm(scope, tx), { action: 'InviteRevoked', target: { type: 'invite', id: invite.id }, details: { email: invite.email, reason: 'revoked' } });
    });
  }

  /**
   * Accepts an invite (POST /v1/invites/accept): creates the invited user (`Active`, email counted
   * as verified, the invite's role) with the given password, makes them a member of the invite's
   * organization (if any, with its organization roles that still exist), starts a session, and marks
   * the invite `Accepted`, all in one transaction. Audits `InviteAccepted`, `UserSignup`,
   * `OrganizationMemberAdded` (with an organization), `SessionCreated`.
   * @throws ApiError 401 `invite_invalid` (unknown, revoked or already accepted token, or a deleted
   *   tenant), 401 `invite_expired` (also marks it `Expired` and audits `InviteExpired`),
   *   400 `password_too_short` / `password_too_common` (the workspace's password policy),
   *   409 `email_taken` when the email already belongs to a live user of the tenant.
   * The route names no workspace: the token does, so the request's scope is built here once the
   * invite's workspace is known.
   */
  async accept(em: EntityManager, token: string, password: string, meta: RequestMeta): Promise<AcceptedInvite> {
    const found = await findInviteByTokenHash(em, sha256Hex(token));
    const tenant = found ? await findLiveTenantById(em, found.tenantId) : null;
    if (!found || !tenant || found.status === 'Revoked' || found.status === 'Accepted') {
      throw INVITE_ERRORS.invalid();
    }
    const scope: TenantScope = { em, tenant, meta };
    if (found.status === 'Expired' || (await this.expireDue(scope, found.id)) > 0) {
      throw INVITE_ERRORS.expired();
    }
    assertPasswordAllowed(tenant, password);
    const passwordHash = await hashPassword(password);
    const now = new Date();
    const user = newUser(
      { tenantId: tenant.id, email: found.email, passwordHash, status: 'Active', role: found.role, emailVerifiedAt: now, locale: meta.locale ?? null },
      now,
    );
    try {
      const tokens = await em.transactional(async (tx) => {
        // Only one of two concurrent acceptances of the same token claims the invite.
        if (!(await acceptInvite(tx, tenant.id, found.id, user.id, now))) throw INVITE_ERRORS.invalid();
        const existing = await countLiveUsersWithEmail(tx, tenant.id, user.email);
        if (existing > 0) throw SIGN_IN_ERRORS.emailTaken();
        await insertUser(tx, user);
        const byInvitee = actingAs(withEm(scope, tx), user.id);
        await this.audit.record(byInvitee, {
          action: 'InviteAccepted', target: { type: 'invite', id: found.id }, details: { email: user.email, role: user.role, userId: user.id },
        });
        await this.audit.record(byInvitee, {
          action: 'UserSignup', target: { type: 'user', id: user.id }, details: { email: user.email, role: user.role, via: 'invite', inviteId: found.id },
        });
        if (found.organizationId) {
          await this.organizationMembers.join(byInvitee, found.organizationId, user.id, found.organizationRoles, { inviteId: found.id });
        }
        return this.sessions.start(byInvitee, user, 'password');
      });
      return { tenant, user, tokens };
    } catch (err) {
      if (isUniqueViolation(err)) throw SIGN_IN_ERRORS.emailTaken();
      throw err;
    }
  }

  /**
   * Accepts an invitation into an organization as the signed-in person it was sent to
   * (POST /v1/{tenantSlug}/me/invites/accept; docs/organizations.md "Invitations"): marks the invite
   * `Accepted` and makes them a member with its roles (those that still exist), in one transaction.
   * Their workspace role does not change. Audits `InviteAccepted` and `OrganizationMemberAdded`.
   * @returns the organization's id.
   * @throws ApiError 401 `invite_invalid` (unknown, revoked or accepted token, another workspace's
   *   invite, or an invite without an organization), 401 `invite_expired`, 403
   *   `invite_email_mismatch` when the invite was sent to another address, 409 `already_member`.
   *   The events are the person's (`actingAs`), with the request's metadata.
   */
  async acceptSignedIn(scope: TenantScope, userId: string, token: string): Promise<string> {
    const { em, tenant } = scope;
    const user = await findLiveUserById(em, tenant.id, userId);
    if (!user) throw INVITE_ERRORS.invalid();
    const found = await findInviteByTokenHash(em, sha256Hex(token));
    if (!found || found.tenantId !== tenant.id || !found.organizationId || found.status === 'Revoked' || found.status === 'Accepted') {
      throw INVITE_ERRORS.invalid();
    }
    if (found.status === 'Expired' || (await this.expireDue(scope, found.id)) > 0) {
      throw INVITE_ERRORS.expired();
    }
    if (found.email !== normalizeEmail(user.email)) throw INVITE_ERRORS.emailMismatch();
    const organizationId = found.organizationId;
    await em.transactional(async (tx) => {
      if (!(await acceptInvite(tx, tenant.id, found.id, user.id, new Date()))) throw INVITE_ERRORS.invalid();
      const byInvitee = actingAs(withEm(scope, tx), user.id);
      await this.audit.record(byInvitee, {
        action: 'InviteAccepted', target: { type: 'invite', id: found.id }, details: { email: found.email, userId: user.id, organizationId, existingAccount: true },
      });
      await this.organizationMembers.join(byInvitee, organizationId, user.id, found.organizationRoles, { inviteId: found.id });
    });
    return organizationId;
  }
}

