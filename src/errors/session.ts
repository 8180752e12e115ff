import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error a credential or session check gives (docs/api-rules.md "Errors"): each entry declares
 * once its code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`); a throw site
 * reads `throw SESSION_ERRORS.sessionRevoked()`. Entries sharing a reason give it in another context.
 */
export const SESSION_ERRORS = defineErrorCatalog({
  /** No bearer credential on a route that needs one. */
  missingCredential: { code: 'UNAUTHORIZED', reason: 'missing_credential', message: 'A bearer token is required' },
  /** A single-use account token (email verification, password reset, email change) is malformed, unknown or spent. */
  invalidToken: { code: 'UNAUTHORIZED', reason: 'invalid_token', message: 'The token is not valid' },
  /** The access token is malformed, forged, unknown or of the wrong kind. */
  invalidAccessToken: { code: 'UNAUTHORIZED', reason: 'invalid_token', message: 'The access token is not valid' },
  /** The API key is malformed or unknown. */
  invalidApiKey: { code: 'UNAUTHORIZED', reason: 'invalid_token', message: 'The API key is not valid' },
  /** The refresh token is unknown. */
  invalidRefreshToken: { code: 'UNAUTHORIZED', reason: 'invalid_token', message: 'The refresh token is not valid' },
  /** The MFA token of a pending sign-in is unknown, spent or of another sign-in. */
  invalidMfaToken: { code: 'UNAUTHORIZED', reason: 'invalid_token', message: 'The MFA token is not valid' },
  /** A single-use account token was valid but its time is up. */
  tokenExpired: { code: 'UNAUTHORIZED', reason: 'token_expired', message: 'The token has expired' },
  /** The access token was valid but its time is up. */
  accessTokenExpired: { code: 'UNAUTHORIZED', reason: 'token_expired', message: 'The access token has expired' },
  /** The MFA token of a pending sign-in is past its time. */
  mfaTokenExpired: { code: 'UNAUTHORIZED', reason: 'token_expired', message: 'The MFA token has expired; sign in again' },
  /** An access token of another tenant on this tenant's route. */
  tenantMismatch: { code: 'UNAUTHORIZED', reason: 'tenant_mismatch', message: 'The token belongs to another tenant' },
  /** An API key of another tenant on this tenant's route. */
  apiKeyTenantMismatch: { code: 'UNAUTHORIZED', reason: 'tenant_mismatch', message: 'The API key belongs to another tenant' },
  /** The session behind the token has ended. */
  sessionRevoked: { code: 'UNAUTHORIZED', reason: 'session_revoked', message: 'The session has ended' },
  /** A rotated refresh token came back: the family is revoked. */
  refreshTokenReused: { code: 'UNAUTHORIZED', reason: 'refresh_token_reused', message: 'The refresh token was already used; the session has been ended' },
  /** The refresh token is past its 30 days. */
  refreshTokenExpired: { code: 'UNAUTHORIZED', reason: 'refresh_token_expired', message: 'The refresh token has expired' },
  /** An API key on a route only a signed-in user may call (`userProcedure`). */
  userTokenRequired: { code: 'UNAUTHORIZED', reason: 'user_token_required', message: 'This route needs a user access token, not an API key' },
  /** An API key deleting the tenant: only an Admin user may. */
  userTokenRequiredToDeleteTenant: {
    code: 'UNAUTHORIZED', reason: 'user_token_required', message: 'Deleting the tenant needs an Admin user access token, not an API key',
  },
  /** An API key finishing an application's sign-in: only the person's session may. */
  userTokenRequiredToFinishSignIn: {
    code: 'UNAUTHORIZED', reason: 'user_token_required', message: 'Finishing a sign-in needs the person\'s session, not an API key',
  },
  /** A Member on an Admin route. */
  adminRequired: { code: 'FORBIDDEN', reason: 'admin_required', message: 'This route needs the Admin role' },
  /** A change only a signed-in Admin may make (an SSO connection): an API key, even a live one, is refused. */
  adminSessionRequired: { code: 'FORBIDDEN', reason: 'admin_session_required', message: 'This change needs a signed-in Admin, not an API key' },
  /** An `ak_test_` API key on a route that changes live secrets or security settings. */
  liveKeyRequired: { code: 'FORBIDDEN', reason: 'live_key_required', message: 'This change needs an Admin or a live API key (ak_live_), not a test key' },
  /** An `ak_test_` API key changing a user's custom data. */
  liveKeyRequiredForCustomData: {
    code: 'FORBIDDEN', reason: 'live_key_required', message: 'Changing custom data needs an Admin or a live API key (ak_live_), not a test key',
  },
  /** The API key was revoked. */
  apiKeyRevoked: { code: 'UNAUTHORIZED', reason: 'api_key_revoked', message: 'The API key has been revoked' },
  /** The API key is past its expiry. */
  apiKeyExpired: { code: 'UNAUTHORIZED', reason: 'api_key_expired', message: 'The API key has expired' },
  /** The sign-in is older than a sensitive change allows (`details.maxAgeSeconds`); `change` completes "Sign in again to …". */
  reauthenticationRequired: {
    code: 'UNAUTHORIZED', reason: 'reauthentication_required',
    message: ({ change }: { change: string; maxAgeSeconds: number }) => `Sign in again to ${change}`,
    details: ({ maxAgeSeconds }: { change: string; maxAgeSeconds: number }) => ({ maxAgeSeconds }),
  },
  /** A browser-session route called without the cookie transport header. */
  cookieTransportRequired: { code: 'BAD_REQUEST', reason: 'cookie_transport_required', message: 'Send x-refresh-transport: cookie' },
  /** The browser holds no refresh cookie. */
  refreshCookieMissing: { code: 'UNAUTHORIZED', reason: 'refresh_cookie_missing', message: 'Not signed in' },
  /** The `Idempotency-Key` header is not 1 to 255 visible ASCII characters. */
  invalidIdempotencyKey: {
    code: 'BAD_REQUEST', reason: 'invalid_idempotency_key', message: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters',
  },
  /** No live session of the user has this id. */
  sessionNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Session not found' },
});

/** The `details.reason` of each entry of SESSION_ERRORS, by entry name (for routers' `errorReasons`). */
export const SESSION_REASONS = reasonsOf(SESSION_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    sessions: typeof SESSION_REASONS;
  }
}
