import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AccountToken, AccountTokenPurpose } from '../../entities/account-token.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { randomToken, sha256Hex } from '../../security/tokens.js';
import type { TokenMailInput } from './account-mail.js';
import type { Locale } from '../../lib/locales.js';
import type { MailContext } from '../mail/mail-layout.js';
import type { MailMessage, Mailer } from '../mail/mailer.js';
import { consumeAccountToken, deleteOpenAccountTokens, findAccountToken, insertAccountToken } from '../../queries/account-token.js';
import { SESSION_ERRORS } from '../../errors/session.js';

/**
 * Seconds each kind of mailed token stays valid: 24 hours to verify an address or confirm a new
 * one, 1 hour to reset a password.
 */
export const ACCOUNT_TOKEN_TTL_SECONDS: Record<AccountTokenPurpose, number> = {
  email_verification: 86_400,
  password_reset: 3_600,
  email_change: 86_400,
};

/** A token just issued: the plaintext to mail (never stored) and when it expires. */
export interface IssuedAccountToken {
  token: string;
  expiresAt: Date;
}

/**
 * Single-use tokens mailed to users (email verification, password reset, email change; OWASP
 * Forgot Password Cheat Sheet): 256 random bits, stored as SHA-256 hashes, expiring, consumed at most once.
 */
export class AccountTokenService {
  constructor(private readonly mailer: Mailer) {}

  /**
   * Issues a token (replacing earlier ones) and queues its mail to the user in one transaction, so a
   * token never exists without its mail queued (Mailer.send: the job queue delivers it with retries
   * after the caller has answered).
   * @param compose builds the message from its context and the link.
   * @param link the URL the mail points to for a token.
   * @param locale the language of the request that asked for the mail, if known; else the
   *   person's own (`user.locale`), else the workspace's default.
   */
  async issueAndMail(
    em: EntityManager,
    tenant: Tenant,
    user: User,
    purpose: AccountTokenPurpose,
    link: (token: string) => string,
    compose: (ctx: MailContext, input: TokenMailInput) => MailMessage,
    locale?: Locale,
  ): Promise<void> {
    await em.transactional(async (tx) => {
      const { token } = await this.issue(tx, tenant.id, user.id, purpose);
      const context = this.mailer.contextFor(tenant, user.email, locale, user.locale);
      const message = compose(context, { link: link(token), ttlSeconds: ACCOUNT_TOKEN_TTL_SECONDS[purpose] });
      await this.mailer.send(message, tenant.id, tx);
    });
  }

  /**
   * Issues a new token for `purpose`; any earlier unused token of the same user and purpose is
   * deleted, so only the newest mail works. Call inside the transaction of the operation.
   * @param newEmail for `email_change` only: the (lower-cased) address the token confirms.
   */
  async issue(
    em: EntityManager,
    tenantId: string,
    userId: string,
    purpose: AccountTokenPurpose,
    now = new Date(),
    newEmail: string | null = null,
  ): Promise<IssuedAccountToken> {
    await deleteOpenAccountTokens(em, tenantId, userId, purpose);
    const token = randomToken(32);
    const expiresAt = new Date(now.getTime() + ACCOUNT_TOKEN_TTL_SECONDS[purpose] * 1000);
    await insertAccountToken(em, {
      id: randomUUID(),
      tenantId,
      userId,
      purpose,
      tokenHash: sha256Hex(token),
      createdAt: now,
      expiresAt,
      consumedAt: null,
      newEmail,
    });
    return { token, expiresAt };
  }

  /**
   * Ends every open token of a user for `purpose` (e.g. reset links once the password changed), so a
   * link mailed earlier cannot be used afterwards. Call inside the transaction of the change.
   * @returns how many tokens were ended.
   */
  async revokeOpen(em: EntityManager, tenantId: string, userId: string, purpose: AccountTokenPurpose): Promise<number> {
    return deleteOpenAccountTokens(em, tenantId, userId, purpose);
  }

  /**
   * The user a presented token belongs to, without consuming it (to check it before slow work).
   * @throws ApiError 401 `invalid_token` (unknown, used, other tenant or purpose), 401 `token_expired`.
   */
  async peek(em: EntityManager, tenantId: string, presented: string, purpose: AccountTokenPurpose): Promise<string> {
    const row = await findAccountToken(em, tenantId, sha256Hex(presented), purpose);
    this.assertUsable(row);
    return row!.userId;
  }

  /**
   * Consumes a token with one conditional UPDATE, so of two concurrent uses exactly one succeeds.
   * Call inside the transaction of the operation the token allows.
   * @returns the id of the user the token belongs to.
   * @throws ApiError 401 `invalid_token` (unknown, already used, other tenant or purpose), 401 `token_expired`.
   */
  async consume(em: EntityManager, tenantId: string, presented: string, purpose: AccountTokenPurpose, now = new Date()): Promise<string> {
    return (await this.consumeRow(em, tenantId, presented, purpose, now)).userId;
  }

  /**
   * Consumes an `email_change` token like {@link consume}.
   * @returns the user's id and the address the token confirms.
   * @throws ApiError 401 `invalid_token`, 401 `token_expired`.
   */
  async consumeEmailChange(em: EntityManager, tenantId: string, presented: string, now = new Date()): Promise<{ userId: string; newEmail: string }> {
    const { userId, newEmail } = await this.consumeRow(em, tenantId, presented, 'email_change', now);
    if (!newEmail) throw SESSION_ERRORS.invalidToken();
    return { userId, newEmail };
  }

  private async consumeRow(
    em: EntityManager,
    tenantId: string,
    presented: string,
    purpose: AccountTokenPurpose,
    now: Date,
  ): Promise<{ userId: string; newEmail: string | null }> {
    const tokenHash = sha256Hex(presented);
    const consumed = await consumeAccountToken(em, tenantId, tokenHash, purpose, now);
    if (consumed !== undefined) return consumed;
    this.assertUsable(await findAccountToken(em, tenantId, tokenHash, purpose), now);
    throw SESSION_ERRORS.invalidToken();
  }

  private assertUsable(row: Pick<AccountToken, 'consumedAt' | 'expiresAt'> | undefined, now = new Date()): void {
    if (!row || row.consumedAt) throw SESSION_ERRORS.invalidToken();
    if (new Date(row.expiresAt).getTime() <= now.getTime()) throw SESSION_ERRORS.tokenExpired();
  }
}
