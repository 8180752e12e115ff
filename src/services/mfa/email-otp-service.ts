import { createHmac, hkdfSync } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { actingAs, withEm, type TenantScope } from '../../lib/request-scope.js';
import { constantTimeEqual, randomDigits } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { lifetimeInWords, mailTranslator } from '../mail/mail-i18n.js';
import { type MailContext, renderMail } from '../mail/mail-layout.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { countEmailOtpAttempt, deleteEmailOtpOfUser, deleteEmailOtpWithHash, upsertEmailOtp } from '../../queries/email-otp.js';

/** Email one-time codes (docs/mfa.md): 6 digits, valid 10 minutes (600 seconds), at most 5 tries. */
export const EMAIL_OTP_DIGITS = 6;
export const EMAIL_OTP_TTL_SECONDS = 600;
export const EMAIL_OTP_MAX_ATTEMPTS = 5;

/**
 * The email one-time code second factor. One open code per user (a new one replaces it), stored as
 * an HMAC-SHA256 under a key derived from `JWT_SECRET` (so a copy of the table alone cannot be
 * brute-forced over the 10^6 codes), deleted once used or after the fifth try.
 */
export class EmailOtpService {
  private readonly hmacKey: Buffer;

  constructor(
    config: Config,
    private readonly mailer: Mailer,
    private readonly audit: AuditService,
  ) {
    this.hmacKey = Buffer.from(hkdfSync('sha256', config.jwtSecret, Buffer.alloc(0), 'email-otp-code-v1', 32));
  }

  /**
   * Creates a new code for the user (replacing an open one) and mails it, in plain text and HTML.
   * Audits `MfaEmailOtpSent` (never the code).
   * The code, its mail (queued with Mailer.send, delivered by the job queue with retries) and the
   *   audit event are written in one transaction: should queueing fail, no new code is left behind
   *   and the error propagates.
   */
  async send(scope: TenantScope, user: User): Promise<void> {
    const { em, tenant } = scope;
    const code = randomDigits(EMAIL_OTP_DIGITS);
    const codeHash = this.hash(tenant.id, user.id, code);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + EMAIL_OTP_TTL_SECONDS * 1000);
    await em.transactional(async (tx) => {
      await upsertEmailOtp(tx, { userId: user.id, tenantId: tenant.id, codeHash, createdAt: now, expiresAt });
      await this.mailer.send(codeMail(this.mailer.contextFor(tenant, user.email, scope.meta.locale, user.locale), code), tenant.id, tx);
      await this.audit.record(actingAs(withEm(scope, tx), user.id), {
        action: 'MfaEmailOtpSent',
        target: { type: 'user', id: user.id },
        details: { expiresInSeconds: EMAIL_OTP_TTL_SECONDS },
      });
    });
  }

  /**
   * Checks a code: every try counts (atomically, so concurrent guesses share the 5 tries); a right
   * code is deleted as it is accepted, so it works once. Audits `MfaEmailOtpVerified` or
   * `MfaEmailOtpFailed` (with `details.reason` `no_open_code` or `wrong_code`).
   * @param options.keep leave a right code open (still counted as a try), for the first of two steps
   *   one code serves (`auth/totp/initial-enroll` then `initial-verify`, docs/mfa.md).
   * @returns whether the code was accepted.
   */
  async verify(scope: TenantScope, user: User, code: string, options: { keep?: boolean } = {}): Promise<boolean> {
    const { em, tenant } = scope;
    const row = await countEmailOtpAttempt(em, tenant.id, user.id, EMAIL_OTP_MAX_ATTEMPTS, new Date());
    let accepted = false;
    if (row && constantTimeEqual(row.codeHash, this.hash(tenant.id, user.id, code)) && options.keep) {
      accepted = true;
    } else if (row && constantTimeEqual(row.codeHash, this.hash(tenant.id, user.id, code))) {
      accepted = await deleteEmailOtpWithHash(em, tenant.id, user.id, row.codeHash);
    } else if (row && row.attempts >= EMAIL_OTP_MAX_ATTEMPTS) {
      await deleteEmailOtpWithHash(em, tenant.id, user.id, row.codeHash);
    }
    await this.audit.record(actingAs(scope, user.id), {
      action: accepted ? 'MfaEmailOtpVerified' : 'MfaEmailOtpFailed',
      target: { type: 'user', id: user.id },
      details: accepted
        ? options.keep ? { kept: true } : {}
        : { reason: row ? 'wrong_code' : 'no_open_code', attemptsLeft: row ? Math.max(0, EMAIL_OTP_MAX_ATTEMPTS - row.attempts) : 0 },
    });
    return accepted;
  }

  /** Deletes the user's open code, if any (after a step that one code served twice has completed). */
  async discard(em: EntityManager, tenant: Tenant, user: User): Promise<void> {
    await deleteEmailOtpOfUser(em, tenant.id, user.id);
  }

  private hash(tenantId: string, userId: string, code: string): string {
    return createHmac('sha256', this.hmacKey).update(`${tenantId}:${userId}:${code}`, 'utf8').digest('hex');
  }
}

/** The sign-in code mail to `ctx.to`: the code, how long it works, what to do if it was not asked for. */
function codeMail(ctx: MailContext, code: string): MailMessage {
  const t = mailTranslator(ctx.locale);
  const values = { workspace: ctx.brand.workspace };
  return renderMail(ctx, t('emailOtp.subject', values), [
    { kind: 'text', text: t('emailOtp.intro', values) },
    { kind: 'code', code },
    { kind: 'text', text: t('emailOtp.validity', { lifetime: lifetimeInWords(EMAIL_OTP_TTL_SECONDS, ctx.locale) }) },
    { kind: 'note', text: t('emailOtp.outro') },
  ]);
}
