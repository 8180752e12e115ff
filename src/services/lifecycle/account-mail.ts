import type { MailMessage } from '../mail/mailer.js';
import { quotedTenantName } from '../mail/tenant-name.js';
import { escapeHtml } from '../../lib/html.js';

/** What a mailed token message needs: where to send it, the tenant's name and the token. */
export interface TokenMailInput {
  to: string;
  tenantName: string;
  /** A link the user opens (built from `PUBLIC_URL`). */
  link: string;
  /** The plaintext token, also printed so an API client can send it itself. */
  token: string;
  /** Validity in seconds, shown rounded to hours or minutes. */
  ttlSeconds: number;
}

function validity(ttlSeconds: number): string {
  return ttlSeconds >= 3600 ? `${Math.round(ttlSeconds / 3600)} hour(s)` : `${Math.round(ttlSeconds / 60)} minute(s)`;
}

function tokenMail(input: TokenMailInput, subject: string, intro: string, action: string, outro: string): MailMessage {
  const text = [
    intro,
    '',
    `${action}: ${input.link}`,
    '',
    `Or send this token to the API: ${input.token}`,
    '',
    `It is valid for ${validity(input.ttlSeconds)} and works once. ${outro}`,
  ].join('\n');
  const html =
    `<p>${escapeHtml(intro)}</p>` +
    `<p><a href="${escapeHtml(input.link)}">${escapeHtml(action)}</a></p>` +
    `<p>Or send this token to the API: <code>${escapeHtml(input.token)}</code></p>` +
    `<p>It is valid for ${escapeHtml(validity(input.ttlSeconds))} and works once. ${escapeHtml(outro)}</p>`;
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
