/**
 * Every `details.reason` the webhook routes give (docs/events.md) (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const WEBHOOK_REASONS = {
  /** The URL is not an allowed delivery target. */
  invalidUrl: 'invalid_webhook_url',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    webhooks: typeof WEBHOOK_REASONS;
  }
}
