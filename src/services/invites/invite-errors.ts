/**
 * Every `details.reason` the invite routes give (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const INVITE_REASONS = {
  /** Unknown invite token. */
  invalid: 'invite_invalid',
  /** The invite is past its expiry. */
  expired: 'invite_expired',
  /** The invite was already accepted or revoked. */
  notOpen: 'invite_not_open',
  /** A signed-in person presented an invitation sent to another address. */
  emailMismatch: 'invite_email_mismatch',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    invites: typeof INVITE_REASONS;
  }
}
