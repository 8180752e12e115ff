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
  if (!defaultLocale || chosenLocale() || browserLocale()) return;
  if (currentLocale() !== defaultLocale) void i18n.changeLanguage(defaultLocale);
}

// The language of this page: the person's choice, else the browser's, else English until the
// workspace's default is known. `<html lang>` follows every change.
i18n.on('languageChanged', () => {
  document.documentElement.lang = currentLocale();
});
void i18n.changeLanguage(chosenLocale() ?? browserLocale() ?? currentLocale());
document.documentElement.lang = currentLocale();
