import { badRequest, type ApiError } from '../../lib/errors.js';

/**
 * Every `details.reason` a credential or session check gives (docs/api-rules.md "Errors"). Declared once here; the error
 * constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const SESSION_REASONS = {
  /** No bearer credential on a route that needs one. */
  missingCredential: 'missing_credential',
  /** The token is malformed, forged, unknown or of the wrong kind. */
  invalidToken: 'invalid_token',
  /** The token was valid but its time is up. */
  tokenExpired: 'token_expired',
  /** A credential of another tenant on this tenant's route. */
  tenantMismatch: 'tenant_mismatch',
  /** The session behind the token has ended. */
  sessionRevoked: 'session_revoked',
  /** A rotated refresh token came back: the family is revoked. */
  refreshTokenReused: 'refresh_token_reused',
  /** The refresh token is past its 30 days. */
  refreshTokenExpired: 'refresh_token_expired',
  /** An API key on a route only a signed-in user may call. */
  userTokenRequired: 'user_token_required',
  /** A Member on an Admin route. */
  adminRequired: 'admin_required',
  /** An `ak_test_` API key on a route that changes live secrets or security settings. */
  liveKeyRequired: 'live_key_required',
  /** The API key was revoked. */
  apiKeyRevoked: 'api_key_revoked',
  /** The API key is past its expiry. */
  apiKeyExpired: 'api_key_expired',
  /** The sign-in is older than the 10 minutes a sensitive change needs. */
  reauthenticationRequired: 'reauthentication_required',
  /** A browser-session route called without the cookie transport header. */
  cookieTransportRequired: 'cookie_transport_required',
  /** The browser holds no refresh cookie. */
  refreshCookieMissing: 'refresh_cookie_missing',
  /** The `Idempotency-Key` header is not 1 to 255 visible ASCII characters. */
  invalidIdempotencyKey: 'invalid_idempotency_key',
} as const;

/** 400 `invalid_idempotency_key`. */
export const invalidIdempotencyKey = (): ApiError =>
  badRequest(SESSION_REASONS.invalidIdempotencyKey, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters');

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    sessions: typeof SESSION_REASONS;
  }
}
