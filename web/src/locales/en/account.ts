/** Strings of the account pages (see ./common.ts for the conventions). */
export const account = {
} as const;
