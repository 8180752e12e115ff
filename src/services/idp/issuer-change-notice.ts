import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Tenant } from '../../entities/tenant.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { mailTranslator } from '../mail/mail-i18n.js';
import { type MailContext, renderMail } from '../mail/mail-layout.js';
import { findActiveAdminRecipients } from '../users/user-queries.js';

/**
 * Mails every live Admin of a tenant that the tenant's identity provider (its OpenID issuer) was
 * changed, and by whom (docs/idp.md "A provider per tenant"): whoever controls the issuer controls
 * provider sign-in, so no Admin may change it unnoticed. The notice carries no secret and no link.
 * Delivery failures are logged, never raised: the change has already been committed.
 */
export class IssuerChangeNotifier {
  constructor(
    private readonly mailer: Mailer,
    private readonly logger: Logger,
  ) {}

  /**
   * Sends the notice to each Active, not deleted Admin of `tenant` (read with `em`, tenant-scoped).
   * `changedBy` is the email of the Admin who made the change.
   */
  async notifyAdmins(em: EntityManager, tenant: Tenant, previousIssuer: string, newIssuer: string, changedBy: string): Promise<void> {
    for (const admin of await findActiveAdminRecipients(em, tenant.id)) {
      try {
        await this.mailer.send(issuerChangeMail(this.mailer.contextFor(tenant, admin.email, admin.locale), previousIssuer, newIssuer, changedBy), tenant.id);
      } catch (err) {
        this.logger.warn({ err, tenantId: tenant.id }, 'issuer-change notice not delivered');
      }
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
