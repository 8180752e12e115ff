import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { mailTranslator } from '../mail/mail-i18n.js';
import { type MailContext, renderMail } from '../mail/mail-layout.js';
import { findActiveAdminRecipients } from '../../queries/user.js';

/**
 * Mails every live Admin of a tenant that the tenant's identity provider (its OpenID issuer) was
 * changed, and by whom (docs/idp.md "A provider per tenant"): whoever controls the issuer controls
 * provider sign-in, so no Admin may change it unnoticed. The notice carries no secret and no link.
 * The mails are queued in the change's own transaction (docs/operations.md "Mail"): no change without
 * its notices, no notice of a change rolled back; delivery is the job queue's, with its retries.
 */
export class IssuerChangeNotifier {
  constructor(private readonly mailer: Mailer) {}

  /**
   * Queues the notice to each Active, not deleted Admin of `tenant` (read with `tx`, tenant-scoped)
   * in `tx`, the change's transaction. `changedBy` is the email of the Admin who made the change.
   * @throws what queueing throws; the change then rolls back with it.
   */
  async notifyAdmins(tx: EntityManager, tenant: Tenant, previousIssuer: string, newIssuer: string, changedBy: string): Promise<void> {
    for (const admin of await findActiveAdminRecipients(tx, tenant.id)) {
      await this.mailer.send(issuerChangeMail(this.mailer.contextFor(tenant, admin.email, admin.locale), previousIssuer, newIssuer, changedBy), tenant.id, tx);
    }
  }
}

/** The notice to one Admin (`ctx.to`) of an issuer change: who, from which issuer to which (defanged). */
function issuerChangeMail(ctx: MailContext, previousIssuer: string, newIssuer: string, changedBy: string): MailMessage {
  const t = mailTranslator(ctx.locale);
  const values = { workspace: ctx.brand.workspace, changedBy, previousIssuer: defang(previousIssuer), newIssuer: defang(newIssuer) };
  return renderMail(ctx, t('issuerChanged.subject', values), [
    { kind: 'text', text: t('issuerChanged.body', values) },
    { kind: 'text', text: t('issuerChanged.advice') },
  ]);
}

/** An issuer URL made inert for mail clients that link anything looking like an address. */
function defang(url: string): string {
  return url.replace(/:\/\//g, '[:]//').replace(/\./g, '[.]');
}
