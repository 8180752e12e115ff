/** Strings of the admin console pages (see ./common.ts for the conventions). */
export const admin = {
} as const;
