import type { TFunction } from 'i18next';
import { UAParser } from 'ua-parser-js';

/**
 * A session's device as a person reads it, from its recorded `User-Agent` (ua-parser-js): "Chrome 131
 * on macOS", "Firefox 128 on Windows 10", "Safari on iOS 17.5"; the raw string when nothing is
 * recognised, "Unknown device" without one; the words in the page language (`t` of the `account` catalog).
 */
export function deviceName(userAgent: string | null, t: TFunction<'account'>): string {
  if (!userAgent) return t('device.unknown');
  const { browser, os } = new UAParser(userAgent).getResult();
  const app = browser.name ? [browser.name, browser.major].filter(Boolean).join(' ') : null;
  // Windows and Android are told apart by version; macOS user agents carry a frozen one, so it is left out.
  const system = os.name ? (os.name === 'Mac OS' ? 'macOS' : [os.name, os.version].filter(Boolean).join(' ')) : null;
  if (app && system) return t('device.appOnSystem', { app, system });
  return app ?? system ?? userAgent;
}
