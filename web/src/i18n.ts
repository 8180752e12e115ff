import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { DEFAULT_LOCALE, isLocale, LOCALES, type Locale } from '../../src/lib/locales.js';
import { resources } from './locales/index.js';

/**
 * The pages' i18next instance (docs/web.md "Languages"), with every catalog of web/src/locales
 * loaded; it starts in English and web/src/language.ts switches it to the person's language.
 */
export const i18n = i18next.createInstance();

void i18n.use(initReactI18next).init({
  resources,
  lng: DEFAULT_LOCALE,
  supportedLngs: [...LOCALES],
  nonExplicitSupportedLngs: true,
  load: 'languageOnly',
  fallbackLng: DEFAULT_LOCALE,
  defaultNS: 'common',
  ns: Object.keys(resources.en),
  interpolation: { escapeValue: false }, // React escapes
  initAsync: false,
});

/** The page language as one of {@link LOCALES}. */
export function currentLocale(): Locale {
  const lng = i18n.resolvedLanguage ?? i18n.language;
  return isLocale(lng) ? lng : DEFAULT_LOCALE;
}

/** A date and time in the page language ("Nov 24, 2026, 2:05 PM" in en, "24.11.2026, 14:05" in de). */
export function formatDateTime(value: string | number | Date): string {
  return new Intl.DateTimeFormat(currentLocale(), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(value));
}

/** A date in the page language ("Nov 24, 2026" in en), or with the given `Intl` options. */
export function formatDate(value: string | number | Date, options: Intl.DateTimeFormatOptions = { dateStyle: 'medium' }): string {
  return new Intl.DateTimeFormat(currentLocale(), options).format(new Date(value));
}

/** A number in the page language ("1,234" in en, "1.234" in de, "1 234" in fr). */
export function formatNumber(value: number): string {
  return new Intl.NumberFormat(currentLocale()).format(value);
}
