import type { Locale } from '../../../src/lib/locales.js';
import { account as deAccount } from './de/account.js';
import { auth as deAuth } from './de/auth.js';
import { common as deCommon } from './de/common.js';
import { admin as deAdmin } from './de/admin.js';
import { reasons as deReasons } from './de/reasons.js';
import { sso as deSso } from './de/sso.js';
import { account as esAccount } from './es/account.js';
import { auth as esAuth } from './es/auth.js';
import { common as esCommon } from './es/common.js';
import { admin as esAdmin } from './es/admin.js';
import { reasons as esReasons } from './es/reasons.js';
import { sso as esSso } from './es/sso.js';
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
 * original; German, French and Spanish are typed against it, so a missing or extra key fails the typecheck,
 * and `test/web/locales.test.ts` checks the placeholders match.
 */
export const resources = {
  en: { common: enCommon, reasons: enReasons, auth: enAuth, account: enAccount, admin: enAdmin, sso: enSso },
  de: { common: deCommon, reasons: deReasons, auth: deAuth, account: deAccount, admin: deAdmin, sso: deSso },
  fr: { common: frCommon, reasons: frReasons, auth: frAuth, account: frAccount, admin: frAdmin, sso: frSso },
  es: { common: esCommon, reasons: esReasons, auth: esAuth, account: esAccount, admin: esAdmin, sso: esSso },
} as const satisfies Record<Locale, unknown>;

/** The namespaces of {@link resources}. */
export type Namespace = keyof (typeof resources)['en'];
