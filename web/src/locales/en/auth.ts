/** Strings of the auth pages (see ./common.ts for the conventions). */
export const auth = {
} as const;
