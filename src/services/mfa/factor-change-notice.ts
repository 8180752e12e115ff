import type { Logger } from 'pino';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { escapeHtml } from '../../lib/html.js';
import type { Actor } from '../../lib/request-meta.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { quotedTenantName } from '../mail/tenant-name.js';

/** A change of a user's second factors that the user is told about by mail. */
export type FactorChange = 'totp_enrolled' | 'totp_disabled' | 'recovery_codes_regenerated';

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
      await this.mailer.send(factorChangeMail(tenant.name, user.email, change, actor.type === 'user' && actor.id === user.id));
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
      await this.mailer.send(recoveryCodeUsedMail(tenant.name, user.email, remaining));
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

function factorChangeMail(tenantName: string, to: string, change: FactorChange, bySelf: boolean): MailMessage {
  const tenant = quotedTenantName(tenantName);
  const what = {
    totp_enrolled: 'An authenticator app (TOTP) was added as a second factor to your account',
    totp_disabled: 'The authenticator app (TOTP) second factor was removed from your account',
    recovery_codes_regenerated: 'A new set of recovery codes was generated for your account (the previous codes no longer work)',
  }[change];
  const who = bySelf ? '' : ' by an administrator';
  const subject = {
    totp_enrolled: `Security notice: authenticator app added (${tenant})`,
    totp_disabled: `Security notice: authenticator app removed (${tenant})`,
    recovery_codes_regenerated: `Security notice: new recovery codes (${tenant})`,
  }[change];
  const advice =
    'If this was you, nothing needs to be done. If it was not, reset your password at once and ask an administrator ' +
    'of the workspace to remove the factor and end your sessions.';
  const text = `${what}${who} in the workspace named ${tenant} (${to}).\n\n${advice}\n`;
  const html = `<p>${escapeHtml(`${what}${who} in the workspace named ${tenant} (${to}).`)}</p><p>${escapeHtml(advice)}</p>`;
  return { to, subject, text, html };
}
