import type { EntityManager } from '@mikro-orm/postgresql';
import type { Tenant } from '../../entities/tenant.js';
import type { User } from '../../entities/user.js';
import type { RequestScope } from '../../lib/request-scope.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { mailTranslator } from '../mail/mail-i18n.js';
import { type MailContext, renderMail } from '../mail/mail-layout.js';

/** A change of a user's second factors that the user is told about by mail. */
export type FactorChange = 'totp_enrolled' | 'totp_disabled' | 'passkey_added' | 'passkey_removed' | 'recovery_codes_regenerated' | 'passkey_clone_suspected';

/**
 * Mails the user a notice of every change of their second factors (docs/mfa.md "Factor-change
 * notices"), so an enrolment by someone holding a stolen password or token, or a removal by an
 * admin, does not go unnoticed. The notice carries no secret and no link. It is queued in the
 * transaction of the change it reports (docs/events.md "Mail"): a change never commits without its
 * notice on the way, and a failure to queue it rolls the change back.
 */
export class FactorChangeNotifier {
  constructor(private readonly mailer: Mailer) {}

  /**
   * Queues the notice of `change` to `user` with `scope.em`, the transaction (or request) that made
   * the change; the notice adds that an admin made it when the scope's actor is not the user.
   * @throws only when the database refuses the insert; inside a transaction the change rolls back with it.
   */
  async notify(
    scope: Pick<RequestScope, 'em' | 'tenant' | 'actor'>, user: Pick<User, 'id' | 'email'> & Partial<Pick<User, 'locale'>>, change: FactorChange,
  ): Promise<void> {
    const { tenant, actor } = scope;
    const context = this.mailer.contextFor(tenant, user.email, user.locale);
    await this.mailer.send(factorChangeMail(context, change, actor.type === 'user' && actor.id === user.id), tenant.id, scope.em);
  }

  /**
   * Tells the user a recovery code was just used to sign in, and how many remain (docs/mfa.md
   * "Recovery codes"). Carries no code and no link. Queued in `em`, beside the audit of the code's use.
   */
  async notifyRecoveryCodeUsed(em: EntityManager, tenant: Tenant, user: Pick<User, 'id' | 'email'> & Partial<Pick<User, 'locale'>>, remaining: number): Promise<void> {
    await this.mailer.send(recoveryCodeUsedMail(this.mailer.contextFor(tenant, user.email, user.locale), remaining), tenant.id, em);
  }
}

/** The notice that a recovery code was used, with how many remain (no code, no link). */
function recoveryCodeUsedMail(ctx: MailContext, remaining: number): MailMessage {
  const t = mailTranslator(ctx.locale);
  const values = { workspace: ctx.brand.workspace, email: ctx.to };
  return renderMail(ctx, t('recoveryCodeUsed.subject', values), [
    { kind: 'text', text: t('recoveryCodeUsed.body', values) },
    { kind: 'text', text: t('recoveryCodeUsed.remaining', { count: remaining }) },
    { kind: 'text', text: t('recoveryCodeUsed.advice') },
  ]);
}

/** The notice of a change of the person's second factors; `bySelf` false adds that an admin made it. */
function factorChangeMail(ctx: MailContext, change: FactorChange, bySelf: boolean): MailMessage {
  const t = mailTranslator(ctx.locale);
  const values = { workspace: ctx.brand.workspace, email: ctx.to };
  return renderMail(ctx, t(`factorChange.subject.${change}`, values), [
    { kind: 'text', text: t(`factorChange.what.${change}`, values) },
    ...(bySelf ? [] : [{ kind: 'text' as const, text: t('factorChange.byAdmin') }]),
    { kind: 'text', text: t('factorChange.advice') },
  ]);
}
