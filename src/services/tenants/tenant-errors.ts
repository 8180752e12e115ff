/**
 * Every `details.reason` the tenant routes give (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const TENANT_REASONS = {
  /** No live tenant has this slug. */
  notFound: 'tenant_not_found',
  /** Another tenant has the slug this name gives. */
  slugTaken: 'slug_taken',
  /** The name gives no usable slug. */
  invalidName: 'invalid_name',
  /** `TENANT_CREATION_TOKEN` is set and the request does not carry it as a bearer token. */
  creationTokenRequired: 'tenant_creation_token_required',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    tenants: typeof TENANT_REASONS;
  }
}
