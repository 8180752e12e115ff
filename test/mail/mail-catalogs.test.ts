import { flattenCatalog, placeholdersOf } from '../helpers/catalogs.js';
import { describe, expect, it } from 'vitest';
import { LOCALES } from '../../src/lib/locales.js';
import { lifetimeInWords, MAIL_CATALOGS, mailTranslator, momentInWords } from '../../src/services/mail/mail-i18n.js';
import { renderMail, type MailContext } from '../../src/services/mail/mail-layout.js';
import { quotedTenantName } from '../../src/services/mail/tenant-name.js';


const context = (overrides: Partial<MailContext['brand']> = {}, locale: MailContext['locale'] = 'en'): MailContext => ({
  to: 'ada@example.com',
  locale,
  brand: { workspace: quotedTenantName('Acme'), logoUrl: null, primaryColor: null, supportUrl: null, ...overrides },
});

describe('the mail catalogs', () => {
  it('translate every sentence into German, French and Spanish, with the same placeholders and never the word "tenant"', () => {
    const english = flattenCatalog(MAIL_CATALOGS.en);
    for (const locale of LOCALES) {
      const catalog = flattenCatalog(MAIL_CATALOGS[locale]);
      expect(Object.keys(catalog).sort()).toEqual(Object.keys(english).sort());
      for (const [key, text] of Object.entries(catalog)) {
        expect(placeholdersOf(text), `${locale}:${key}`).toEqual(placeholdersOf(english[key]!));
        expect(text, `${locale}:${key}`).not.toMatch(/\btenant\b/i);
        if (locale !== 'en') expect(text, `${locale}:${key} is still English`).not.toBe(english[key]);
      }
    }
  });

  it('write lifetimes and moments in words in each language, never as ISO timestamps', () => {
    expect(lifetimeInWords(3600, 'en')).toBe('1 hour');
    expect(lifetimeInWords(86_400, 'de')).toBe('24 Stunden');
    expect(lifetimeInWords(600, 'fr')).toBe('10 minutes');
    const moment = new Date('2026-11-24T14:05:00Z');
    expect(momentInWords(moment, 'en')).toMatch(/^Tuesday, November 24, 2026 at 2:05\sPM UTC$/);
    expect(momentInWords(moment, 'de')).toMatch(/^Dienstag, 24\. November 2026 um 14:05 UTC$/);
    expect(momentInWords(moment, 'fr')).toMatch(/^mardi 24 novembre 2026 à 14:05 UTC$/);
    expect(lifetimeInWords(3600, 'es')).toBe('1 hora');
    expect(momentInWords(moment, 'es')).toMatch(/^martes, 24 de noviembre de 2026, 14:05 UTC$/);
    expect(mailTranslator('de')('recoveryCodeUsed.remaining', { count: 1 })).toBe('Sie haben noch 1 unbenutzten Wiederherstellungscode.');
    expect(mailTranslator('fr')('recoveryCodeUsed.remaining', { count: 2 })).toBe('Il vous reste 2 codes de récupération inutilisés.');
    expect(mailTranslator('es')('recoveryCodeUsed.remaining', { count: 1 })).toBe('Te queda 1 código de recuperación sin usar.');
    expect(mailTranslator('es')('recoveryCodeUsed.remaining', { count: 3 })).toBe('Te quedan 3 códigos de recuperación sin usar.');
  });
});

describe('the mail layout', () => {
  it('escapes every piece of text and writes only https and mailto links', () => {
    const ctx = context({ workspace: quotedTenantName('<b>Evil</b> "quote"'), supportUrl: 'javascript:alert(1)', primaryColor: 'red;background:url(x)' });
    const mail = renderMail(ctx, 'Subject <x>', [
      { kind: 'text', text: '<script>alert(1)</script>' },
      { kind: 'action', label: 'Go <now>', url: 'https://id.example.test/a?b=1&c="2"' },
    ]);
    expect(mail.html).not.toMatch(/<script>|<b>Evil|javascript:|url\(x\)/);
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.html).toContain('href="https://id.example.test/a?b=1&amp;c=&quot;2&quot;"');
    expect(mail.html).toContain('background:#1d4ed8');
    expect(mail.text).toContain('Go <now>: https://id.example.test/a?b=1&c="2"');
  });

  it('puts the workspace\'s logo, colour and support link in a member\'s mail, and no support link in an invitation', () => {
    const ctx = context({ logoUrl: 'https://id.example.test/v1/acme/branding/logo?v=1', primaryColor: '#0f766e', supportUrl: 'https://help.acme.example/' }, 'de');
    const member = renderMail(ctx, 'S', [{ kind: 'action', label: 'Los', url: 'https://id.example.test/x' }]);
    expect(member.html).toContain('<img src="https://id.example.test/v1/acme/branding/logo?v=1"');
    expect(member.html).toContain('background:#0f766e');
    expect(member.html).toContain('href="https://help.acme.example/"');
    expect(member.text).toContain('Brauchen Sie Hilfe? Wenden Sie sich an "Acme": https://help.acme.example/');
    expect(member.html).toContain('<html lang="de">');
    const invite = renderMail(ctx, 'S', [{ kind: 'action', label: 'Los', url: 'https://id.example.test/x' }], 'invite');
    expect(invite.html).not.toContain('help.acme.example');
    expect(invite.text).toContain('weil ein Admin von "Acme" ada@example.com eingeladen hat');
  });
});
