import type { Translation } from '../../../../src/lib/locales.js';
import type { auth as english } from '../en/auth.js';

/** German: see ../en/auth.ts. */
export const auth: Translation<typeof english> = {
};
