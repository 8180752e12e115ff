import Negotiator from 'negotiator';

/** The languages of the pages and the mails (docs/web.md "Languages"): English, German, French, Spanish. */
export const LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

/** The language when neither the person nor the workspace chose one. */
export const DEFAULT_LOCALE: Locale = 'en';

/** The name of each language in itself, as a language switcher lists it. */
export const LOCALE_NAMES: Record<Locale, string> = { en: 'English', de: 'Deutsch', fr: 'Français', es: 'Español' };

/**
 * The shape a translation must have: every key of the English original `T`, each a string, nested
 * groups alike. A German, French or Spanish catalog typed with it fails the typecheck when it misses a key
 * or has one the original does not.
 */
export type Translation<T> = { readonly [K in keyof T]: T[K] extends string ? string : Translation<T[K]> };

/** True when `value` is one of {@link LOCALES}. */
export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/**
 * The best of {@link LOCALES} for an `Accept-Language` header (RFC 9110 §12.5.4: tags by quality,
 * `de-CH` matching `de`), or undefined when the header is absent, names none of them, or is only
 * the wildcard `*` (what clients such as Node's fetch send by default: no preference).
 */
export function negotiateLocale(acceptLanguage: string | undefined): Locale | undefined {
  if (!acceptLanguage) return undefined;
  for (const tag of new Negotiator({ headers: { 'accept-language': acceptLanguage } }).languages()) {
    const language = tag.split('-')[0]!.toLowerCase();
    if (isLocale(language)) return language;
  }
  return undefined;
}
