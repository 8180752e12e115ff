import type { ErrorReason } from '../../src/lib/errors.js';

/**
 * What every page says for each `details.reason` of the API (docs/api-rules.md "Errors"): one
 * sentence a person understands, in the pages' words ("workspace", never "tenant"). The type makes
 * a reason without a sentence fail the typecheck; `test/api/reason-messages.test.ts` checks every
 * reason the OpenAPI document lists has one.
 */
export const REASON_MESSAGES: Record<ErrorReason, string> = {
  // the request itself
  validation_failed: 'Some fields need another look.',
  malformed_json: 'The page sent something the service could not read. Reload the page and try again.',
  unsupported_media_type: 'The page sent something the service could not read. Reload the page and try again.',
  unreadable_body: 'The page sent something the service could not read. Reload the page and try again.',
  body_not_object: 'The page sent something the service could not read. Reload the page and try again.',
  body_too_deep: 'The page sent something the service could not read. Reload the page and try again.',
  body_too_large: 'That is more than the service accepts at once. Shorten it and try again.',
  invalid_characters: 'A field holds characters that cannot be used. Remove them and try again.',
  malformed_query: 'This address is not valid. Check the link and try again.',
  malformed_path: 'This address is not valid. Check the link and try again.',
  malformed_http: 'The browser sent a request the service could not read. Reload the page.',
  headers_too_large: 'The browser sent too much with the request. Clear this site\'s cookies and try again.',
  origin_not_allowed: 'This page is not allowed to talk to the service from here. Open it from the service\'s own address.',
  rate_limited: 'Too many attempts. Wait a moment and try again.',
  not_found: 'We could not find that. It may have been deleted.',
  internal_error: 'Something went wrong on our side. Try again in a moment.',
  service_unavailable: 'The service is busy or restarting. Try again in a moment.',
  invalid_idempotency_key: 'The page sent an invalid request. Reload the page and try again.',
  // signing in and sessions
  invalid_credentials: 'The email or password is not right.',
  email_not_verified: 'Your email address is not verified yet. Open the link we mailed you, or send a new one.',
  user_suspended: 'This account is suspended. Ask an admin of the workspace to reactivate it.',
  missing_credential: 'You are signed out. Sign in again.',
  invalid_token: 'This link or code is not valid any more. Ask for a new one.',
  token_expired: 'This link has expired. Ask for a new one.',
  session_revoked: 'This session has ended. Sign in again.',
  refresh_token_expired: 'Your session has expired. Sign in again.',
  refresh_token_reused: 'For your safety this session was ended. Sign in again.',
  refresh_cookie_missing: 'Your session has ended in this browser. Sign in again.',
  cookie_transport_required: 'Your browser did not keep the session. Allow cookies for this site and sign in again.',
  reauthentication_required: 'For your safety, sign in again first (it is needed less than 10 minutes before this change).',
  fresh_sign_in_required: 'For your safety, sign in again first.',
  user_token_required: 'Only a signed-in person can do this, not an API key.',
  admin_required: 'Only an admin of the workspace can do this.',
  admin_session_required: 'Only a signed-in admin can do this, not an API key.',
  tenant_mismatch: 'This belongs to another workspace. Sign in to that workspace.',
  tenant_not_found: 'There is no workspace at this address. Check the link.',
  browser_mismatch: 'This sign-in was started in another browser. Start again here.',
  // sign-up, users and workspaces
  email_taken: 'An account with this email address already exists in this workspace.',
  email_unchanged: 'That is already your email address.',
  email_already_verified: 'This email address is already verified.',
  signup_disabled: 'This workspace does not take new sign-ups. Ask an admin for an invite.',
  signup_domain_not_allowed: 'This workspace takes sign-ups from some email domains only. Use your work address, or ask an admin for an invite.',
  last_admin: 'The workspace needs at least one active admin. Make someone else an admin first.',
  erasure_requested_by_user: 'This person deleted their own account; it cannot be restored.',
  invalid_cursor: 'The list changed. Reload the page.',
  slug_taken: 'A workspace with this name already exists. Choose another name.',
  invalid_name: 'Use a name with at least one letter or digit.',
  tenant_creation_token_required: 'Creating a workspace on this service needs the creation token from its operator.',
  // invites
  invite_invalid: 'This invitation is not valid any more. Ask an admin to send a new one.',
  invite_expired: 'This invitation has expired. Ask an admin to send a new one.',
  invite_not_open: 'This invitation was already accepted or revoked.',
  expires_at_in_past: 'Choose a date in the future.',
  // second factors
  mfa_required: 'Enter the code from your authenticator app, or ask for a code by email.',
  invalid_mfa_code: 'That code is not right. Check your authenticator app and try again.',
  mfa_disabled: 'Two-step verification is turned off in this workspace.',
  totp_already_enrolled: 'An authenticator app is already set up.',
  totp_not_enrolled: 'No authenticator app is set up.',
  totp_enrollment_not_started: 'Start setting up the authenticator app again.',
  totp_enrollment_changed: 'The authenticator setup changed in another window. Start again.',
  missing_code: 'Enter a code.',
  // passkeys
  invalid_passkey: 'This passkey was not accepted. Try again, or use another way to sign in.',
  passkey_not_found: 'This passkey is not known here. It may have been removed.',
  passkey_already_registered: 'This passkey is already added to your account.',
  passkey_challenge_invalid: 'The passkey prompt expired. Try again.',
  passkey_counter_regressed: 'This passkey looks copied, so it was refused. We emailed you about it.',
  // the workspace's identity provider
  idp_not_configured: 'This workspace has no identity provider set up.',
  idp_unavailable: 'The identity provider does not answer. Try again in a moment.',
  idp_discovery_failed: 'The identity provider could not be reached. Check its issuer URL.',
  idp_error: 'The identity provider refused the sign-in.',
  invalid_state: 'This sign-in is not valid any more. Start again.',
  state_expired: 'This sign-in took too long. Start again.',
  state_reused: 'This sign-in was already used. Start again.',
  code_exchange_failed: 'The identity provider did not confirm the sign-in. Start again.',
  id_token_invalid: 'The identity provider\'s answer could not be verified. Start again.',
  issuer_mismatch: 'The answer came from another identity provider. Start again.',
  idp_email_missing: 'The identity provider did not share your email address.',
  idp_email_unverified: 'The identity provider has not verified your email address yet.',
  idp_email_domain_not_allowed: 'This workspace does not accept accounts from that email domain.',
  idp_identity_linked_elsewhere: 'This provider account is already linked to another account.',
  idp_link_required: 'An account with this email exists. Sign in with it first, then link the provider from your account page.',
  idp_link_email_mismatch: 'The provider account has another email address than yours.',
  idp_issuer_not_allowed: 'This issuer URL cannot be used (it points to a private address).',
  invalid_issuer: 'Enter the issuer URL of the provider (https).',
  // applications, API keys, webhooks
  invalid_redirect_uri: 'Enter a valid redirect URI (https, or http on localhost).',
  application_has_no_secret: 'This application has no client secret (it is a public client).',
  interaction_not_found: 'This sign-in request expired. Go back to the application and start again.',
  live_key_required: 'A test API key cannot do this. Use a live key or sign in as an admin.',
  api_key_expired: 'This API key has expired.',
  api_key_revoked: 'This API key was revoked.',
  invalid_webhook_url: 'Enter a public https URL for the webhook.',
};

/** "45 seconds", "2 minutes", "1 hour": a wait in words. */
export function waitInWords(seconds: number): string {
  if (seconds < 60) {
    const s = Math.max(1, Math.ceil(seconds));
    return `${s} second${s === 1 ? '' : 's'}`;
  }
  if (seconds < 3600) {
    const m = Math.ceil(seconds / 60);
    return `${m} minute${m === 1 ? '' : 's'}`;
  }
  const h = Math.ceil(seconds / 3600);
  return `${h} hour${h === 1 ? '' : 's'}`;
}

/**
 * A validation issue (Zod's message, docs/api-rules.md "Errors") as a sentence beside its field:
 * "Too small: expected string to have >=12 characters" → "Use at least 12 characters."
 */
export function issueInWords(message: string): string {
  const min = /^Too small: expected string to have >=(\d+) characters?/.exec(message);
  if (min) return min[1] === '1' ? 'This field is required.' : `Use at least ${min[1]} characters.`;
  const max = /^Too big: expected string to have <=(\d+) characters?/.exec(message);
  if (max) return `Use at most ${max[1]} characters.`;
  const numMin = /^Too small: expected number to be >=(\d+)/.exec(message);
  if (numMin) return `Use ${numMin[1]} or more.`;
  const numMax = /^Too big: expected number to be <=(\d+)/.exec(message);
  if (numMax) return `Use ${numMax[1]} or less.`;
  if (/^Invalid email/.test(message)) return 'Enter an email address like name@example.com.';
  if (/^Invalid input: expected \w+, received undefined/.test(message)) return 'This field is required.';
  if (/^Invalid option/.test(message)) return 'Choose one of the options.';
  if (/^Invalid (URL|url)/.test(message)) return 'Enter a full URL, starting with https://.';
  if (/^Invalid ISO datetime|^Invalid datetime/.test(message)) return 'Enter a date and time.';
  return message;
}
