import { escapeHtml } from '../../lib/html.js';
import type { BrandDisplay } from '../../entities/tenant.js';
import type { Locale } from '../../lib/locales.js';
import type { MailMessage } from './mail-transport.js';
import { mailTranslator } from './mail-i18n.js';

/** How a workspace's mails look (docs/web.md "Branding"): its name and, when set, logo, colour, support link. */
export interface MailBrand {
  /** The workspace's display name as mails show it: quoted and defanged (tenant-name.ts). */
  workspace: string;
  /** Absolute URL of the workspace's logo, served by this service; null: none. */
  logoUrl: string | null;
  /** How the header shows the workspace (default `LogoAndName`): `LogoOnly` drops the name beside a logo (it becomes its alt text), `NameOnly` the logo. */
  display?: BrandDisplay;
  /** `#rrggbb` of buttons (contrast-checked when set); null: the service's blue. */
  primaryColor: string | null;
  /** An https or mailto link for help; null: none. */
  supportUrl: string | null;
}

/** Who a mail goes to, in which language, in whose brand. */
export interface MailContext {
  to: string;
  locale: Locale;
  brand: MailBrand;
}

/** One part of a mail body. */
export type MailBlock =
  | { kind: 'text'; text: string }
  /** A one-time code, shown large. */
  | { kind: 'code'; code: string }
  /** A button (and the plain link for clients that show no buttons). */
  | { kind: 'action'; label: string; url: string }
  /** A smaller, quieter sentence. */
  | { kind: 'note'; text: string };

/** The button colour without a workspace colour (the pages' own primary, white text at 6.7:1). */
const DEFAULT_PRIMARY = '#1d4ed8';
const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;
const SAFE_LINK = /^(https:\/\/|mailto:)/i;

/**
 * Builds a mail in plain text and HTML (docs/events.md "Mail"): the workspace's logo and name on
 * top, the blocks, then a footer saying why the mail came and, for members, the support link. Every
 * piece of text is escaped for HTML; only https and mailto links are ever written.
 * @param footer `member` for mails about an account, `invite` for an invitation (no support link:
 *   the invitee has no account yet, and the mail should carry no link of the inviter's choosing but
 *   the invitation itself).
 */
export function renderMail(ctx: MailContext, subject: string, blocks: MailBlock[], footer: 'member' | 'invite' = 'member'): MailMessage {
  const t = mailTranslator(ctx.locale);
  const { brand } = ctx;
  const colour = brand.primaryColor && HEX_COLOUR.test(brand.primaryColor) ? brand.primaryColor : DEFAULT_PRIMARY;
  const footerLines = [footer === 'invite' ? t('layout.footerInvite', { workspace: brand.workspace, email: ctx.to }) : t('layout.footer', { workspace: brand.workspace })];
  const support = footer === 'member' && brand.supportUrl && SAFE_LINK.test(brand.supportUrl) ? brand.supportUrl : null;

  const textParts = [brand.workspace, ''];
  for (const block of blocks) {
    if (block.kind === 'action') textParts.push(`${block.label}: ${block.url}`);
    else if (block.kind === 'code') textParts.push(`    ${block.code}`);
    else textParts.push(block.text);
    textParts.push('');
  }
  textParts.push('--', ...footerLines);
  if (support) textParts.push(t('layout.support', { workspace: brand.workspace, supportUrl: support }));

  const p = (text: string, style = 'margin:0 0 16px') => `<p style="${style}">${escapeHtml(text)}</p>`;
  const body = blocks
    .map((block) => {
      switch (block.kind) {
        case 'text':
          return p(block.text);
        case 'note':
          return p(block.text, 'margin:0 0 16px;color:#4b5563;font-size:14px');
        case 'code':
          return `<p style="margin:0 0 16px;font-size:28px;font-weight:700;letter-spacing:6px;font-family:ui-monospace,Menlo,Consolas,monospace">${escapeHtml(block.code)}</p>`;
        case 'action':
          return (
            `<p style="margin:0 0 16px"><a href="${escapeHtml(block.url)}" style="display:inline-block;background:${colour};color:#ffffff;` +
            `padding:12px 20px;border-radius:6px;text-decoration:none;font-weight:600">${escapeHtml(block.label)}</a></p>` +
            `<p style="margin:0 0 16px;color:#4b5563;font-size:13px">${escapeHtml(t('layout.orOpen'))}<br>` +
            `<a href="${escapeHtml(block.url)}" style="color:#1d4ed8;word-break:break-all">${escapeHtml(block.url)}</a></p>`
          );
      }
    })
    .join('');
  const showLogo = brand.logoUrl !== null && brand.display !== 'NameOnly';
  const showName = !showLogo || brand.display !== 'LogoOnly';
  const logo = showLogo
    ? `<img src="${escapeHtml(brand.logoUrl!)}" alt="${showName ? '' : escapeHtml(brand.workspace)}" height="40" style="display:block;height:40px;max-width:200px;margin:0 0 ${showName ? 8 : 20}px">`
    : '';
  const name = showName ? `<p style="margin:0 0 20px;font-size:18px;font-weight:600">${escapeHtml(brand.workspace)}</p>` : '';
  const supportHtml = support
    ? `<p style="margin:8px 0 0">${escapeHtml(t('layout.support', { workspace: brand.workspace, supportUrl: '' }).trimEnd())} ` +
      `<a href="${escapeHtml(support)}" style="color:#1d4ed8">${escapeHtml(support)}</a></p>`
    : '';
  const html =
    `<!doctype html><html lang="${ctx.locale}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>` +
    '<body style="margin:0;padding:24px 12px;background:#f3f4f6;font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;color:#111827;line-height:1.5">' +
    '<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px;border-top:4px solid ' + colour + '">' +
    logo + name +
    body +
    `<div style="border-top:1px solid #e5e7eb;margin-top:24px;padding-top:12px;color:#4b5563;font-size:13px">` +
    footerLines.map((line) => `<p style="margin:0">${escapeHtml(line)}</p>`).join('') +
    supportHtml +
    '</div></div></body></html>';
  return { to: ctx.to, subject, text: `${textParts.join('\n')}\n`, html };
}
