/**
 * Every `details.reason` the API-key routes give (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const API_KEY_REASONS = {
  /** `expiresAt` is not in the future. */
  expiresAtInPast: 'expires_at_in_past',
  /** An `ak_test_` key called a route that changes the tenant's security (`securityAdminProcedure`). */
  liveKeyRequired: 'live_key_required',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    apiKeys: typeof API_KEY_REASONS;
  }
}
