import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { mailTranslator } from '../mail/mail-i18n.js';
import { type MailContext, renderMail } from '../mail/mail-layout.js';
import { findActiveAdminRecipients } from '../../queries/user.js';

/** What happened to a connection, as the notice tells it. */
export interface SsoConnectionChange {
  kind: 'created' | 'updated' | 'deleted';
  name: string;
  domains: readonly string[];
  /** The identity provider's entity id. */
  provider: string;
  /** The email of the Admin who made the change. */
  changedBy: string;
}

/**
 * Mails the tenant's other live Admins that a single sign-on connection was created, changed or
 * deleted, and by whom (docs/sso.md "Who may change a connection"): a connection decides who signs in
 * for its domains, so no Admin may change one unnoticed. No secret and no link; URLs are made inert.
 * The mails are queued in the change's own transaction (docs/operations.md "Mail"): no change without
 * its notices, no notice of a change rolled back; delivery is the job queue's, with its retries.
 */
export class SsoConnectionNotifier {
  constructor(private readonly mailer: Mailer) {}

  /**
   * Queues the notice, in `tx` (the change's transaction), to each Active Admin of `tenant` but the
   * one who made the change.
   * @throws what queueing throws; the change then rolls back with it.
   */
  async notifyAdmins(tx: EntityManager, tenant: Tenant, change: SsoConnectionChange): Promise<void> {
    for (const admin of await findActiveAdminRecipients(tx, tenant.id)) {
      if (admin.email === change.changedBy) continue;
      await this.mailer.send(connectionChangeMail(this.mailer.contextFor(tenant, admin.email, admin.locale), change), tenant.id, tx);
    }
  }
}

function connectionChangeMail(ctx: MailContext, change: SsoConnectionChange): MailMessage {
  const t = mailTranslator(ctx.locale);
  const values = {
    workspace: ctx.brand.workspace, changedBy: change.changedBy, name: change.name,
    domains: change.domains.map(defang).join(', '), provider: defang(change.provider),
  };
  return renderMail(ctx, t('ssoConnectionChanged.subject', values), [
    { kind: 'text', text: t(`ssoConnectionChanged.${change.kind}`, values) },
    { kind: 'text', text: t('ssoConnectionChanged.advice') },
  ]);
}

/** A URL or domain made inert for mail clients that link anything looking like an address. */
function defang(text: string): string {
  return text.replace(/:\/\//g, '[:]//').replace(/\./g, '[.]');
}
