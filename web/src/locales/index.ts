import type { Locale } from '../../../src/lib/locales.js';
import { account as deAccount } from './de/account.js';
import { auth as deAuth } from './de/auth.js';
import { common as deCommon } from './de/common.js';
import { admin as deAdmin } from './de/admin.js';
import { reasons as deReasons } from './de/reasons.js';
import { sso as deSso } from './de/sso.js';
import { account as enAccount } from './en/account.js';
import { auth as enAuth } from './en/auth.js';
import { common as enCommon } from './en/common.js';
import { admin as enAdmin } from './en/admin.js';
import { reasons as enReasons } from './en/reasons.js';
import { sso as enSso } from './en/sso.js';
import { account as frAccount } from './fr/account.js';
import { auth as frAuth } from './fr/auth.js';
import { common as frCommon } from './fr/common.js';
import { admin as frAdmin } from './fr/admin.js';
import { reasons as frReasons } from './fr/reasons.js';
import { sso as frSso } from './fr/sso.js';

/**
 * Every string of the pages, per language and namespace (docs/web.md "Languages"). English is the
 * original; German and French are typed against it, so a missing or extra key fails the typecheck,
 * and `test/web/locales.test.ts` checks the placeholders match.
 */
export const resources = {
  en: { common: enCommon, reasons: enReasons, auth: enAuth, account: enAccount, admin: enAdmin, sso: enSso },
  de: { common: deCommon, reasons: deReasons, auth: deAuth, account: deAccount, admin: deAdmin, sso: deSso },
  fr: { common: frCommon, reasons: frReasons, auth: frAuth, account: frAccount, admin: frAdmin, sso: frSso },
} as const satisfies Record<Locale, unknown>;

/** The namespaces of {@link resources}. */
export type Namespace = keyof (typeof resources)['en'];
