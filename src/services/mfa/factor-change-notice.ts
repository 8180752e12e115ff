import type { Logger } from 'pino';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { escapeHtml } from '../../lib/html.js';
import type { Actor } from '../../lib/request-meta.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { quotedTenantName } from '../mail/tenant-name.js';

/** A change of a user's second factors that the user is told about by mail. */
export type FactorChange = 'totp_enrolled' | 'totp_disabled' | 'passkey_added' | 'passkey_removed' | 'recovery_codes_regenerated' | 'passkey_clone_suspected';

/**
 * Mails the user a notice of every change of their second factors (docs/mfa.md "Factor-change
 * notices"), so an enrolment by someone holding a stolen password or token, or a removal by an
 * admin, does not go unnoticed. The notice carries no secret and no link. Delivery failures are
 * logged, never raised: the change itself has already been committed.
 */
export class FactorChangeNotifier {
  constructor(
    private readonly mailer: Mailer,
    private readonly logger: Logger,
  ) {}

  /** Sends the notice of `change` to `user` (after the caller's transaction committed). */
  async notify(tenant: Tenant, user: Pick<User, 'id' | 'email'>, change: FactorChange, actor: Actor): Promise<void> {
    try {
      await this.mailer.send(factorChangeMail(tenant.name, user.email, change, actor.type === 'user' && actor.id === user.id), tenant.id);
    } catch (err) {
      this.logger.warn({ err, tenantId: tenant.id, userId: user.id, change }, 'factor-change notice not delivered');
    }
  }

  /**
   * Tells the user a recovery code was just used to sign in, and how many remain (docs/mfa.md
   * "Recovery codes"). Carries no code and no link.
   */
  async notifyRecoveryCodeUsed(tenant: Tenant, user: Pick<User, 'id' | 'email'>, remaining: number): Promise<void> {
    try {
      await this.mailer.send(recoveryCodeUsedMail(tenant.name, user.email, remaining), tenant.id);
    } catch (err) {
      this.logger.warn({ err, tenantId: tenant.id, userId: user.id }, 'recovery-code notice not delivered');
    }
  }
}

function recoveryCodeUsedMail(tenantName: string, to: string, remaining: number): MailMessage {
  const tenant = quotedTenantName(tenantName);
  const what = `A recovery code was used to sign in to your account in the workspace named ${tenant} (${to}). ${remaining} unused recovery code${remaining === 1 ? '' : 's'} remain.`;
  const advice =
    'If this was you, consider generating a new set of recovery codes. If it was not, reset your password at once and ask an ' +
    'administrator of the workspace to remove the factor and end your sessions.';
  return {
    to,
    subject: `Security notice: recovery code used (${tenant})`,
    text: `${what}\n\n${advice}\n`,
    html: `<p>${escapeHtml(what)}</p><p>${escapeHtml(advice)}</p>`,
  };
}

/** The sentence and the subject line of each notice. */
const FACTOR_CHANGE_TEXT: Record<FactorChange, { what: string; subject: string }> = {
  totp_enrolled: { what: 'An authenticator app (TOTP) was added as a second factor to your account', subject: 'authenticator app added' },
  totp_disabled: { what: 'The authenticator app (TOTP) second factor was removed from your account', subject: 'authenticator app removed' },
  passkey_added: { what: 'A passkey (it signs you in without a password) was added to your account', subject: 'passkey added' },
  passkey_removed: { what: 'A passkey was removed from your account', subject: 'passkey removed' },
  recovery_codes_regenerated: {
    what: 'A new set of recovery codes was generated for your account (the previous codes no longer work)',
    subject: 'new recovery codes',
  },
  passkey_clone_suspected: {
    what:
      'A sign-in with one of your passkeys was refused because its signature counter went backwards, which is what a copied ' +
      '(cloned) authenticator does',
    subject: 'passkey sign-in refused',
  },
};

function factorChangeMail(tenantName: string, to: string, change: FactorChange, bySelf: boolean): MailMessage {
  const tenant = quotedTenantName(tenantName);
  const what = FACTOR_CHANGE_TEXT[change].what;
  const who = bySelf ? '' : ' by an administrator';
  const subject = `Security notice: ${FACTOR_CHANGE_TEXT[change].subject} (${tenant})`;
  const advice =
    'If this was you, nothing needs to be done. If it was not, reset your password at once and ask an administrator ' +
    'of the workspace to remove the factor and end your sessions.';
  const text = `${what}${who} in the workspace named ${tenant} (${to}).\n\n${advice}\n`;
  const html = `<p>${escapeHtml(`${what}${who} in the workspace named ${tenant} (${to}).`)}</p><p>${escapeHtml(advice)}</p>`;
  return { to, subject, text, html };
}
