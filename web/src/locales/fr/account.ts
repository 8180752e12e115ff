import type { Translation } from '../../../../src/lib/locales.js';
import type { account as english } from '../en/account.js';

/** French: see ../en/account.ts. */
export const account: Translation<typeof english> = {
};
