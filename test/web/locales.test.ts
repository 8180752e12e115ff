import { flattenCatalog, placeholdersOf } from '../helpers/catalogs.js';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCALES } from '../../src/lib/locales.js';
import { buildOpenApiDocument } from '../../src/rest/openapi.js';
import { IMPORT_USER_REASONS } from '../../src/services/users/user-import-service.js';
import { i18n } from '../../web/src/i18n.js';
import { resources } from '../../web/src/locales/index.js';
import { issueInWords, reasonMessage, waitInWords } from '../../web/src/messages.js';

/** Every `details.reason` enum value anywhere in the document's error responses. */
function documentedReasons(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) documentedReasons(item, found);
  } else if (node && typeof node === 'object') {
    const reason = (node as { properties?: { reason?: { enum?: unknown } } }).properties?.reason?.enum;
    if (Array.isArray(reason)) for (const value of reason) found.add(String(value));
    for (const value of Object.values(node)) documentedReasons(value, found);
  }
  return found;
}


afterAll(async () => {
  await i18n.changeLanguage('en');
});

describe('the pages\' languages', () => {
  it('has a non-empty sentence for each details.reason the OpenAPI document lists, in every language, in the pages\' words', async () => {
    const reasons = documentedReasons(buildOpenApiDocument('http://127.0.0.1'));
    // per-user outcomes inside a successful import's body (docs/import.md), not errors the pages show
    for (const reason of IMPORT_USER_REASONS) reasons.delete(reason);
    expect(reasons.size).toBeGreaterThan(60);
    for (const locale of LOCALES) {
      await i18n.changeLanguage(locale);
      const missing = [...reasons].filter((reason) => !reasonMessage(reason)?.trim());
      expect({ locale, missing }).toEqual({ locale, missing: [] });
    }
    for (const message of Object.values(resources.en.reasons)) {
      expect(message).toMatch(/^[A-Z].*\.$/);
      expect(message).not.toMatch(/\btenant\b/i);
    }
  });

  it('translates every key of every namespace with the same placeholders, and never says "tenant"', () => {
    const english = Object.fromEntries(Object.entries(resources.en).map(([ns, catalog]) => [ns, flattenCatalog(catalog)]));
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      for (const [ns, catalog] of Object.entries(resources[locale])) {
        const translated = flattenCatalog(catalog);
        const original = english[ns]!;
        expect(Object.keys(translated).sort(), `${locale}/${ns} keys`).toEqual(Object.keys(original).sort());
        for (const [key, text] of Object.entries(translated)) {
          expect(text.trim(), `${locale}/${ns}:${key}`).not.toBe('');
          expect(placeholdersOf(text), `${locale}/${ns}:${key}`).toEqual(placeholdersOf(original[key]!));
        }
      }
    }
    for (const locale of LOCALES) {
      for (const [ns, catalog] of Object.entries(resources[locale])) {
        for (const [key, text] of Object.entries(flattenCatalog(catalog))) expect(text, `${locale}/${ns}:${key}`).not.toMatch(/\btenant\b/i);
      }
    }
  });

  it('leaves no sentence in English in another language (names of products and of other services\' fields may stay)', () => {
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      const untranslated: string[] = [];
      for (const [ns, catalog] of Object.entries(resources[locale])) {
        const original = flattenCatalog(resources.en[ns as keyof typeof resources.en]);
        for (const [key, text] of Object.entries(flattenCatalog(catalog))) {
          const isSentence = text.trim().split(/\s+/).length >= 3 && /[.?!:]$/.test(text.trim());
          if (isSentence && text === original[key]) untranslated.push(`${ns}:${key}`);
        }
      }
      expect({ locale, untranslated }).toEqual({ locale, untranslated: [] });
    }
  });

  it('says a wait in words and validation issues as sentences in the page language', async () => {
    await i18n.changeLanguage('en');
    expect(waitInWords(1)).toBe('1 second');
    expect(waitInWords(45)).toBe('45 seconds');
    expect(waitInWords(61)).toBe('2 minutes');
    expect(waitInWords(3600)).toBe('1 hour');
    expect(waitInWords(3601)).toBe('2 hours');
    expect(issueInWords('Too small: expected string to have >=12 characters')).toBe('Use at least 12 characters.');
    expect(issueInWords('Too big: expected string to have <=254 characters')).toBe('Use at most 254 characters.');
    expect(issueInWords('Invalid email address')).toBe('Enter an email address like name@example.com.');
    expect(issueInWords('Invalid input: expected string, received undefined')).toBe('This field is required.');
    expect(issueInWords('Something else')).toBe('Something else');
    await i18n.changeLanguage('de');
    expect(waitInWords(61)).toBe('2 Minuten');
    expect(waitInWords(1)).toBe('1 Sekunde');
    expect(issueInWords('Too small: expected string to have >=12 characters')).toBe('Verwenden Sie mindestens 12 Zeichen.');
    expect(reasonMessage('invalid_credentials')).toBe('E-Mail-Adresse oder Passwort stimmen nicht.');
    await i18n.changeLanguage('fr');
    expect(waitInWords(3600).replace(/\s/g, ' ')).toBe('1 heure');
    expect(issueInWords('Too small: expected string to have >=12 characters')).toBe('Utilisez au moins 12 caractères.');
    await i18n.changeLanguage('es');
    expect(waitInWords(61)).toBe('2 minutos');
    expect(waitInWords(1)).toBe('1 segundo');
    expect(issueInWords('Too small: expected string to have >=12 characters')).toBe('Usa al menos 12 caracteres.');
    expect(issueInWords('Invalid email address')).toBe('Introduce una dirección de correo como nombre@ejemplo.com.');
    expect(reasonMessage('invalid_credentials')).toBe('El correo o la contraseña no son correctos.');
    expect(reasonMessage('no_such_reason')).toBeUndefined();
  });
});
