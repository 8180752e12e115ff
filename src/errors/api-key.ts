import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error the API-key routes give of their own (docs/api-rules.md "Errors"): each entry declares
 * once its code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`). A test key on
 * a security route is refused with SESSION_ERRORS.liveKeyRequired.
 */
export const API_KEY_ERRORS = defineErrorCatalog({
  /** `expiresAt` is not in the future. */
  expiresAtInPast: { code: 'BAD_REQUEST', reason: 'expires_at_in_past', message: 'expiresAt must be in the future' },
  /** No API key of the tenant has this id. */
  apiKeyNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'API key not found' },
});

/** The `details.reason` of each entry of API_KEY_ERRORS, by entry name (for routers' `errorReasons`). */
export const API_KEY_REASONS = reasonsOf(API_KEY_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    apiKeys: typeof API_KEY_REASONS;
  }
}
