import type { MailMessage } from '../mail/mailer.js';
import { quotedTenantName } from '../mail/tenant-name.js';
import { escapeHtml } from '../../lib/html.js';

/** What a mailed token message needs: where to send it, the tenant's name and the token. */
export interface TokenMailInput {
  to: string;
  tenantName: string;
  /** A link the user opens (built from `PUBLIC_URL`). */
  link: string;
  /** The plaintext token (inside `link`). */
  token: string;
  /** Validity in seconds, shown rounded to hours or minutes. */
  ttlSeconds: number;
}

/** A lifetime in words: "1 hour", "24 hours", "10 minutes" (English plural rules, Intl.PluralRules). */
export function lifetimeInWords(ttlSeconds: number): string {
  const [amount, unit] = ttlSeconds >= 3600 ? [Math.round(ttlSeconds / 3600), 'hour'] : [Math.max(1, Math.round(ttlSeconds / 60)), 'minute'];
  return `${amount} ${unit}${new Intl.PluralRules('en').select(amount) === 'one' ? '' : 's'}`;
}

/** The link carries the token, so the mail shows the link and never asks a person to handle the token. */
function tokenMail(input: TokenMailInput, subject: string, intro: string, action: string, outro: string): MailMessage {
  const text = [intro, '', `${action}: ${input.link}`, '', `The link works once, for ${lifetimeInWords(input.ttlSeconds)}. ${outro}`].join('\n');
  const html =
    `<p>${escapeHtml(intro)}</p>` +
    `<p><a href="${escapeHtml(input.link)}">${escapeHtml(action)}</a></p>` +
    `<p>The link works once, for ${escapeHtml(lifetimeInWords(input.ttlSeconds))}. ${escapeHtml(outro)}</p>`;
  return { to: input.to, subject, text, html };
}

/** The mail asking a user to confirm their address (email verification). */
export function verificationMail(input: TokenMailInput): MailMessage {
  const tenant = quotedTenantName(input.tenantName);
  return tokenMail(
    input,
    `Confirm your email address for ${tenant}`,
    `Please confirm that ${input.to} is your email address for ${tenant}.`,
    'Confirm my email address',
    'If you did not sign up, ignore this mail.',
  );
}

/** The mail carrying a password-reset token. */
export function passwordResetMail(input: TokenMailInput): MailMessage {
  const tenant = quotedTenantName(input.tenantName);
  return tokenMail(
    input,
    `Reset your password for ${tenant}`,
    `Someone asked to reset the password of ${input.to} for ${tenant}.`,
    'Choose a new password',
    'If it was not you, ignore this mail: your password stays as it is.',
  );
}

/** The mail to a NEW address asking its owner to confirm it as the account's sign-in email. */
export function emailChangeMail(input: TokenMailInput): MailMessage {
  const tenant = quotedTenantName(input.tenantName);
  return tokenMail(
    input,
    `Confirm your new email address for ${tenant}`,
    `Someone asked to make ${input.to} the sign-in email of an account in the workspace named ${tenant}.`,
    'Confirm my new email address',
    'If it was not you, ignore this mail: nothing changes until the link is opened.',
  );
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
 * The notice to the OLD address once the change is done: carries no link and no token, names the
 * new address masked, and tells the owner what to do if it was not them.
 */
export function emailChangedNotice(input: { to: string; tenantName: string; newEmail: string }): MailMessage {
  const tenant = quotedTenantName(input.tenantName);
  const what = `The sign-in email of your account in the workspace named ${tenant} was changed from ${input.to} to ${maskedEmail(input.newEmail)}.`;
  const advice =
    'If this was you, nothing needs to be done; this address no longer signs in. If it was not you, contact an administrator ' +
    'of the workspace at once: they can see the change in the audit log, restore your address and end every session of the account.';
  return {
    to: input.to,
    subject: `Security notice: sign-in email changed (${tenant})`,
    text: `${what}\n\n${advice}\n`,
    html: `<p>${escapeHtml(what)}</p><p>${escapeHtml(advice)}</p>`,
  };
}
