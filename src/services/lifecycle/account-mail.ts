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
