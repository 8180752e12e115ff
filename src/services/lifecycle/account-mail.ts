import type { MailMessage } from '../mail/mailer.js';
import { lifetimeInWords, mailTranslator } from '../mail/mail-i18n.js';
import { type MailContext, renderMail } from '../mail/mail-layout.js';

/** What a mailed-link message needs besides its context: the link and how long it works. */
export interface TokenMailInput {
  /** A link the person opens (built from `PUBLIC_URL`); it carries the token. */
  link: string;
  /** Validity in seconds, shown rounded to hours or minutes in the mail's language. */
  ttlSeconds: number;
}

/**
 * A mail with a single-use link. The link carries the token, so the mail shows a button and the
 * link and never asks a person to handle the token.
 */
function tokenMail(ctx: MailContext, kind: 'verification' | 'passwordReset' | 'emailChange', input: TokenMailInput): MailMessage {
  const t = mailTranslator(ctx.locale);
  const values = { workspace: ctx.brand.workspace, email: ctx.to };
  return renderMail(ctx, t(`${kind}.subject`, values), [
    { kind: 'text', text: t(`${kind}.intro`, values) },
    { kind: 'action', label: t(`${kind}.action`), url: input.link },
    { kind: 'text', text: t('lifetime.once', { lifetime: lifetimeInWords(input.ttlSeconds, ctx.locale) }) },
    { kind: 'note', text: t(`${kind}.outro`) },
  ]);
}

/** The mail asking a person to confirm their address (email verification), to `ctx.to`. */
export function verificationMail(ctx: MailContext, input: TokenMailInput): MailMessage {
  return tokenMail(ctx, 'verification', input);
}

/** The mail with a password-reset link, to `ctx.to`. */
export function passwordResetMail(ctx: MailContext, input: TokenMailInput): MailMessage {
  return tokenMail(ctx, 'passwordReset', input);
}

/** The mail to a NEW address (`ctx.to`) asking its owner to confirm it as the account's sign-in email. */
export function emailChangeMail(ctx: MailContext, input: TokenMailInput): MailMessage {
  return tokenMail(ctx, 'emailChange', input);
}

/**
 * An address with its local part hidden but its first character: `n***@example.com`, so the notice
 * to the old address tells the owner where the account went without handing the address out.
 */
export function maskedEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, Math.min(1, at))}***${email.slice(at)}`;
}

/**
 * The notice to the OLD address (`ctx.to`) once the change is done: carries no link and no token,
 * names the new address masked, and tells the owner what to do if it was not them.
 */
export function emailChangedNotice(ctx: MailContext, newEmail: string): MailMessage {
  const t = mailTranslator(ctx.locale);
  const values = { workspace: ctx.brand.workspace, email: ctx.to, newEmail: maskedEmail(newEmail) };
  return renderMail(ctx, t('emailChanged.subject', values), [
    { kind: 'text', text: t('emailChanged.body', values) },
    { kind: 'text', text: t('emailChanged.advice') },
  ]);
}
