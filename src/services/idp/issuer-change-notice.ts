import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Tenant } from '../../entities/tenant.js';
import { escapeHtml } from '../../lib/html.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { quotedTenantName } from '../mail/tenant-name.js';
import { findActiveAdminEmails } from '../users/user-queries.js';

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
    const admins = await findActiveAdminEmails(em, tenant.id);
    for (const admin of admins) {
      try {
        await this.mailer.send(issuerChangeMail(tenant.name, admin, previousIssuer, newIssuer, changedBy), tenant.id);
      } catch (err) {
        this.logger.warn({ err, tenantId: tenant.id }, 'issuer-change notice not delivered');
      }
    }
  }
}

function issuerChangeMail(tenantName: string, to: string, previousIssuer: string, newIssuer: string, changedBy: string): MailMessage {
  const tenant = quotedTenantName(tenantName);
  const [from, into] = [defang(previousIssuer), defang(newIssuer)];
  const what =
    `The identity provider of the workspace named ${tenant} was changed by ${changedBy}: sign-in with the provider now trusts ` +
    `${into} instead of ${from}.`;
  const advice =
    'If this change was not agreed, remove the provider credentials at once (DELETE oauth/idp/credentials), end the sessions ' +
    'opened through it, and review the audit log (IdpOauthLinked events).';
  return {
    to,
    subject: `Security notice: identity provider changed (${tenant})`,
    text: `${what}\n\n${advice}\n`,
    html: `<p>${escapeHtml(what)}</p><p>${escapeHtml(advice)}</p>`,
  };
}

/** An issuer URL made inert for mail clients that link anything looking like an address. */
function defang(url: string): string {
  return url.replace(/:\/\//g, '[:]//').replace(/\./g, '[.]');
}
