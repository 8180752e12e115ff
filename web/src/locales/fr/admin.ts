import type { Translation } from '../../../../src/lib/locales.js';
import type { admin as english } from '../en/admin.js';

/** French: see ../en/admin.ts. */
export const admin: Translation<typeof english> = {
};
