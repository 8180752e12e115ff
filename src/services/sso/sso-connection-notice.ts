import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Tenant } from '../../entities/tenant.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { mailTranslator } from '../mail/mail-i18n.js';
import { type MailContext, renderMail } from '../mail/mail-layout.js';
import { findActiveAdminRecipients } from '../users/user-queries.js';

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
 * Delivery failures are logged, never raised: the change has already been committed.
 */
export class SsoConnectionNotifier {
  constructor(
    private readonly mailer: Mailer,
    private readonly logger: Logger,
  ) {}

  /** Sends the notice to each Active Admin of `tenant` but the one who made the change. */
  async notifyAdmins(em: EntityManager, tenant: Tenant, change: SsoConnectionChange): Promise<void> {
    for (const admin of await findActiveAdminRecipients(em, tenant.id)) {
      if (admin.email === change.changedBy) continue;
      try {
        await this.mailer.send(connectionChangeMail(this.mailer.contextFor(tenant, admin.email, admin.locale), change), tenant.id);
      } catch (err) {
        this.logger.warn({ err, tenantId: tenant.id }, 'SSO connection notice not delivered');
      }
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
