import i18next from 'i18next';
import { DEFAULT_LOCALE, LOCALES, type Locale } from '../../lib/locales.js';
import { mailDe } from './locales/de.js';
import { mailEn } from './locales/en.js';
import { mailEs } from './locales/es.js';
import { mailFr } from './locales/fr.js';

/** The mail catalogs per language (namespace `mail`); English is the original. */
export const MAIL_CATALOGS = { en: mailEn, de: mailDe, fr: mailFr, es: mailEs } as const satisfies Record<Locale, unknown>;

/**
 * The mails' own i18next instance (docs/web.md "Languages"), separate from the pages'. No HTML
 * escaping here: the layout (mail-layout.ts) escapes each finished sentence for the HTML part.
 */
const mailI18n = i18next.createInstance();
void mailI18n.init({
  resources: Object.fromEntries(LOCALES.map((locale) => [locale, { mail: MAIL_CATALOGS[locale] }])),
  lng: DEFAULT_LOCALE,
  fallbackLng: DEFAULT_LOCALE,
  supportedLngs: [...LOCALES],
  defaultNS: 'mail',
  ns: ['mail'],
  interpolation: { escapeValue: false },
  initAsync: false,
});

/** `a.b` for every sentence of the English catalog; plural keys (`x_one`, `x_other`) as `x`. */
type KeyPaths<T, Prefix extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${Prefix}${K extends `${infer Base}_${'one' | 'other'}` ? Base : K}` : KeyPaths<T[K], `${Prefix}${K}.`>;
}[keyof T & string];

/** A key of the mail catalogs. */
export type MailKey = KeyPaths<typeof mailEn>;

/** Translates a mail key with `{{name}}` values (and `count` for plurals). */
export type MailTranslate = (key: MailKey, values?: Record<string, string | number>) => string;

/** The translate function of the mails in `locale`: `t('verification.subject', { workspace })`. */
export function mailTranslator(locale: Locale): MailTranslate {
  const t = mailI18n.getFixedT(locale, 'mail' as never) as unknown as (key: string, values?: Record<string, string | number>) => string;
  return (key, values) => t(key, values);
}

/** "24 hours", "10 Minuten", "1 heure": a lifetime in seconds in words, rounded to hours or minutes (Intl). */
export function lifetimeInWords(ttlSeconds: number, locale: Locale): string {
  const [amount, unit] = ttlSeconds >= 3600 ? [Math.round(ttlSeconds / 3600), 'hour'] : [Math.max(1, Math.round(ttlSeconds / 60)), 'minute'];
  return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(amount);
}

/** "Tuesday, November 24, 2026 at 2:05 PM UTC" in the mail's language (Intl): a moment as a mail shows it, never ISO. */
export function momentInWords(moment: Date, locale: Locale): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'full', timeStyle: 'short', timeZone: 'UTC' }).format(moment)} UTC`;
}
