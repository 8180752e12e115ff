import { isLocale, type Locale } from '../../src/lib/locales.js';
import { currentLocale, i18n } from './i18n';

/** Where the language a person chose with the switcher is kept (it overrides the browser's). */
const CHOSEN_LANGUAGE_KEY = 'language';

/** The language chosen with the switcher, if any. */
export function chosenLocale(): Locale | undefined {
  try {
    const stored = localStorage.getItem(CHOSEN_LANGUAGE_KEY);
    return isLocale(stored) ? stored : undefined;
  } catch {
    return undefined; // storage refused (private mode)
  }
}

/**
 * The first of the browser's languages (`navigator.languages`, the list it sends as
 * `Accept-Language`, `de-CH` counting as `de`) that the pages speak.
 */
function browserLocale(): Locale | undefined {
  for (const tag of navigator.languages.length ? navigator.languages : [navigator.language]) {
    const language = tag.split('-')[0]?.toLowerCase();
    if (isLocale(language)) return language;
  }
  return undefined;
}

/** Switches the pages to `locale` and remembers the choice in this browser (the switcher). */
export function chooseLocale(locale: Locale): void {
  try {
    localStorage.setItem(CHOSEN_LANGUAGE_KEY, locale);
  } catch {
    // storage refused: the choice lasts until the page is left
  }
  void i18n.changeLanguage(locale);
}

/**
 * Applies a workspace's default language (sign-in-options `defaultLocale`) when the person chose
 * none and the browser asks for none the pages speak (docs/web.md "Languages").
 */
export function applyWorkspaceLanguage(defaultLocale: Locale | null | undefined): void {
  if (!defaultLocale || chosenLocale() || applicationLocale || browserLocale()) return;
  if (currentLocale() !== defaultLocale) void i18n.changeLanguage(defaultLocale);
}

/** The language the application asked for on this page, if any (it outranks the workspace's default). */
let applicationLocale: Locale | undefined;

/**
 * Applies the language an application asked for (`ui_locales` of its authorization request) on the
 * hosted sign-in page, unless the person chose one with the switcher (docs/web.md "Languages").
 * Not remembered: the next page follows the person's browser again.
 */
export function applyApplicationLanguage(locale: Locale | null | undefined): void {
  if (!locale || chosenLocale()) return;
  applicationLocale = locale;
  if (currentLocale() !== locale) void i18n.changeLanguage(locale);
}

// The language of this page: the person's choice, else the browser's, else English until the
// workspace's default is known. `<html lang>` follows every change.
i18n.on('languageChanged', () => {
  document.documentElement.lang = currentLocale();
});
void i18n.changeLanguage(chosenLocale() ?? browserLocale() ?? currentLocale());
document.documentElement.lang = currentLocale();
