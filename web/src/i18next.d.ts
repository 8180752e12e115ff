import 'i18next';
import type { resources } from './locales';

// Keys passed to t() are checked against the English catalogs.
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'common';
    resources: (typeof resources)['en'];
  }
}
