import { i18n } from './i18n.js';

/**
 * The sentence every page shows for a `details.reason` of the API (docs/api-rules.md "Errors") in
 * the page language, from the `reasons` catalogs (web/src/locales); undefined for a reason the
 * catalogs do not know. `test/web/locales.test.ts` checks every reason the OpenAPI document lists has
 * a sentence in every language.
 */
export function reasonMessage(reason: string, details: Record<string, unknown> = {}): string | undefined {
  // numbers of `details` (e.g. `minLength` of `password_too_short`) fill the sentence's {{placeholders}}
  const values = Object.fromEntries(Object.entries(details).filter(([, value]) => typeof value === 'number'));
  return i18n.exists(reason, { ns: 'reasons' }) ? i18n.t(reason as 'validation_failed', { ns: 'reasons', ...values }) : undefined;
}

/** "45 seconds", "2 minutes", "1 hour" (in the page language, by `Intl`): a wait in words. */
export function waitInWords(seconds: number): string {
  const [amount, unit] = seconds < 60
    ? [Math.max(1, Math.ceil(seconds)), 'second']
    : seconds < 3600 ? [Math.ceil(seconds / 60), 'minute'] : [Math.ceil(seconds / 3600), 'hour'];
  return new Intl.NumberFormat(i18n.language, { style: 'unit', unit, unitDisplay: 'long' }).format(amount);
}

/**
 * A validation issue (Zod's message, docs/api-rules.md "Errors") as a sentence beside its field, in
 * the page language: "Too small: expected string to have >=12 characters" → "Use at least 12
 * characters."; a message it does not recognise is shown as it is.
 */
export function issueInWords(message: string): string {
  const t = i18n.t;
  const min = /^Too small: expected string to have >=(\d+) characters?/.exec(message);
  if (min) return min[1] === '1' ? t('issues.required') : t('issues.minLength', { count: Number(min[1]) });
  const max = /^Too big: expected string to have <=(\d+) characters?/.exec(message);
  if (max) return t('issues.maxLength', { count: Number(max[1]) });
  const numMin = /^Too small: expected number to be >=(\d+)/.exec(message);
  if (numMin) return t('issues.minNumber', { min: Number(numMin[1]) });
  const numMax = /^Too big: expected number to be <=(\d+)/.exec(message);
  if (numMax) return t('issues.maxNumber', { max: Number(numMax[1]) });
  if (/^Invalid email/.test(message)) return t('issues.email');
  if (/^Invalid input: expected \w+, received undefined/.test(message)) return t('issues.required');
  if (/^Invalid option/.test(message)) return t('issues.option');
  if (/^Invalid (URL|url)/.test(message)) return t('issues.url');
  if (/^must not be blank/.test(message)) return t('issues.required');
  if (/^must not contain control characters/.test(message)) return t('issues.controlCharacters');
  if (/^Invalid ISO datetime|^Invalid datetime/.test(message)) return t('issues.dateTime');
  return message;
}
