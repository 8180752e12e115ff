import { defineErrorCatalog, reasonsOf } from '../lib/errors.js';

/**
 * Every error the tenant routes give (docs/api-rules.md "Errors"): each entry declares once its code,
 * `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`).
 */
export const TENANT_ERRORS = defineErrorCatalog({
  /** No live tenant has this slug (or the tenant went away during the request). */
  tenantNotFound: { code: 'NOT_FOUND', reason: 'tenant_not_found', message: 'Tenant not found' },
  /** Another tenant has the slug this name gives. */
  slugTaken: { code: 'CONFLICT', reason: 'slug_taken', message: ({ slug }: { slug: string }) => `A tenant with the slug "${slug}" already exists` },
  /** The name gives no usable slug. */
  invalidName: {
    code: 'BAD_REQUEST', reason: 'invalid_name',
    message: 'The workspace name must contain a letter a–z (accents are fine) or a digit 0–9: its URL is made from them',
  },
  /** `TENANT_CREATION_TOKEN` is set and the request does not carry it as a bearer token. */
  creationTokenRequired: { code: 'UNAUTHORIZED', reason: 'tenant_creation_token_required', message: 'Creating a workspace needs the deployment\'s creation token' },
});

/** The `details.reason` of each entry of TENANT_ERRORS, by entry name (for routers' `errorReasons`). */
export const TENANT_REASONS = reasonsOf(TENANT_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    tenants: typeof TENANT_REASONS;
  }
}
