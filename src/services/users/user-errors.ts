/**
 * Every `details.reason` the user-administration and own-account routes give (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const USER_REASONS = {
  /** The change would leave the tenant without an active Admin. */
  lastAdmin: 'last_admin',
  /** The paging cursor is not one this service issued. */
  invalidCursor: 'invalid_cursor',
  /** A verification mail was asked for an address that is verified already. */
  emailAlreadyVerified: 'email_already_verified',
  /** The user deleted their own account (an erasure request): an admin may not bring it back. */
  erasureRequestedByUser: 'erasure_requested_by_user',
  /** An email change to the address the account already has. */
  emailUnchanged: 'email_unchanged',
  /** `customData` is larger than 4 KiB as JSON. */
  customDataTooLarge: 'custom_data_too_large',
  /** An import job's body has more lines than the job takes (docs/import.md). */
  importTooManyLines: 'import_too_many_lines',
  /** A line of an import job's body is longer than a line may be. */
  importLineTooLong: 'import_line_too_long',
  /** An import job's body holds no line. */
  importEmpty: 'import_empty',
  /** A password being set is shorter than the workspace's `passwordPolicy.minLength` (`details.minLength`). */
  passwordTooShort: 'password_too_short',
  /** A password being set is on the bundled list of common passwords (`passwordPolicy.rejectCommon`). */
  passwordTooCommon: 'password_too_common',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    users: typeof USER_REASONS;
  }
}
