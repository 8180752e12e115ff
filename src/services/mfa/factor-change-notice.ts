import type { Logger } from 'pino';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import { escapeHtml } from '../../lib/html.js';
import type { Actor } from '../../lib/request-meta.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { quotedTenantName } from '../mail/tenant-name.js';

/** A change of a user's second factors that the user is told about by mail. */
export type FactorChange = 'totp_enrolled' | 'totp_disabled';

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
}

function factorChangeMail(tenantName: string, to: string, change: FactorChange, bySelf: boolean): MailMessage {
  const tenant = quotedTenantName(tenantName);
  const what =
    change === 'totp_enrolled'
      ? 'An authenticator app (TOTP) was added as a second factor to your account'
      : 'The authenticator app (TOTP) second factor was removed from your account';
  const who = bySelf ? '' : ' by an administrator';
  const subject = change === 'totp_enrolled' ? `Security notice: authenticator app added (${tenant})` : `Security notice: authenticator app removed (${tenant})`;
  const advice =
    'If this was you, nothing needs to be done. If it was not, reset your password at once and ask an administrator ' +
    'of the workspace to remove the factor and end your sessions.';
  const text = `${what}${who} in the workspace named ${tenant} (${to}).\n\n${advice}\n`;
  const html = `<p>${escapeHtml(`${what}${who} in the workspace named ${tenant} (${to}).`)}</p><p>${escapeHtml(advice)}</p>`;
  return { to, subject, text, html };
}
