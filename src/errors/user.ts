import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error the user-administration and own-account routes give (docs/api-rules.md "Errors"):
 * each entry declares once its code, `details.reason` and message (src/lib/errors.ts
 * `defineErrorCatalog`); entries sharing a reason give it in another context.
 */
export const USER_ERRORS = defineErrorCatalog({
  /** No live user of the tenant has this id. */
  userNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'User not found' },
  /** The change would leave the tenant without an active Admin (a demotion or a suspension). */
  lastAdmin: { code: 'CONFLICT', reason: 'last_admin', message: 'The last active admin of a workspace cannot be demoted or suspended' },
  /** The last active Admin deleting their own account. */
  lastAdminLeaving: { code: 'CONFLICT', reason: 'last_admin', message: 'The last active admin of a tenant cannot be removed' },
  /** The paging cursor is not one this service issued. */
  invalidCursor: { code: 'BAD_REQUEST', reason: 'invalid_cursor', message: 'The cursor is not one this list handed out' },
  /** A verification mail was asked for an address that is verified already. */
  emailAlreadyVerified: { code: 'CONFLICT', reason: 'email_already_verified', message: 'This user has verified their email address already' },
  /** The user deleted their own account (an erasure request): an admin may not bring it back. */
  erasureRequestedByUser: { code: 'CONFLICT', reason: 'erasure_requested_by_user', message: 'This user deleted their own account; it cannot be restored' },
  /** An email change to the address the account already has. */
  emailUnchanged: { code: 'BAD_REQUEST', reason: 'email_unchanged', message: 'This is already the email address of your account' },
  /** `customData` is larger than `maxBytes` as JSON. */
  customDataTooLarge: {
    code: 'BAD_REQUEST', reason: 'custom_data_too_large', message: ({ maxBytes }: { maxBytes: number }) => `customData is larger than ${maxBytes} bytes as JSON`,
  },
  /** An import job's body has more lines than the job takes (docs/import.md). */
  importTooManyLines: { code: 'PAYLOAD_TOO_LARGE', reason: 'import_too_many_lines', message: ({ maxLines }: { maxLines: number }) => `At most ${maxLines} lines` },
  /** A line of an import job's body is longer than a line may be. */
  importLineTooLong: {
    code: 'BAD_REQUEST', reason: 'import_line_too_long', message: ({ maxLineBytes }: { maxLineBytes: number }) => `A line is longer than ${maxLineBytes} bytes`,
  },
  /** An import job's body holds no line. */
  importEmpty: { code: 'BAD_REQUEST', reason: 'import_empty', message: 'The body holds no user' },
  /** No import job of the tenant has this id. */
  importJobNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'No such import job' },
  /** A password being set is shorter than the workspace's `passwordPolicy.minLength` (`details.minLength`). */
  passwordTooShort: {
    code: 'BAD_REQUEST', reason: 'password_too_short',
    message: ({ minLength }: { minLength: number }) => `The password must have at least ${minLength} characters`,
    details: ({ minLength }: { minLength: number }) => ({ minLength }),
  },
  /** A password being set is on the bundled list of common passwords (`passwordPolicy.rejectCommon`). */
  passwordTooCommon: { code: 'BAD_REQUEST', reason: 'password_too_common', message: 'This password is among the most common passwords; choose another' },
});

/** The `details.reason` of each entry of USER_ERRORS, by entry name (for routers' `errorReasons`). */
export const USER_REASONS = reasonsOf(USER_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    users: typeof USER_REASONS;
  }
}
