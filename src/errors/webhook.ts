import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error the webhook routes give (docs/events.md, docs/api-rules.md "Errors"): each entry
 * declares once its code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`).
 */
export const WEBHOOK_ERRORS = defineErrorCatalog({
  /** The URL is not an allowed delivery target (`problem`: why). */
  invalidUrl: { code: 'BAD_REQUEST', reason: 'invalid_webhook_url', message: ({ problem }: { problem: string }) => problem },
  /** No webhook endpoint of the tenant has this id. */
  webhookNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Webhook not found' },
});

/** The `details.reason` of each entry of WEBHOOK_ERRORS, by entry name (for routers' `errorReasons`). */
export const WEBHOOK_REASONS = reasonsOf(WEBHOOK_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    webhooks: typeof WEBHOOK_REASONS;
  }
}
