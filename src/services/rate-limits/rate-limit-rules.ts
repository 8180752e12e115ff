import type { ErrorReason } from '../../lib/errors.js';
import type { RateLimitBudget } from '../../lib/rate-limit-budget.js';
import { MFA_REASONS } from '../../errors/mfa.js';
import { SESSION_REASONS } from '../../errors/session.js';
import { SIGN_IN_REASONS } from '../../errors/sign-in.js';

/**
 * The budgets of docs/api-rules.md "Rate limits". A procedure declares the ones it spends in its meta
 * (`rateLimit: { ip: SIGN_IN_PER_IP, account: 'reset' }`, src/lib/rate-limit-budget.ts), so renaming
 * it keeps its limit; the pipeline spends them (src/middleware/pipeline.ts). Every `points` value is
 * multiplied by `RATE_LIMIT_SCALE` when the limiter is built. A procedure that declares none carries
 * no per-IP or per-account limit (authenticated routes still get the per-credential budget).
 */
export type { AccountAttemptMode, ProcedureRateLimits, RateLimitBudget } from '../../lib/rate-limit-budget.js';

/** Login, request-email-otp, the initial TOTP steps, IdP callback: 100 requests per minute per IP. */
export const SIGN_IN_PER_IP: RateLimitBudget = { name: 'ip_sign_in', points: 100, durationSeconds: 60 };
/** Signup, tenant creation, invite acceptance: 20 per hour per IP. */
export const ACCOUNT_CREATION_PER_IP: RateLimitBudget = { name: 'ip_account_creation', points: 20, durationSeconds: 3600 };
/**
 * Refresh: 120 per minute per IP, taken from Redis ten at a time by each instance (a lease, as
 * {@link PER_CREDENTIAL}): every refresh spends it, and a refresh token is not guessable, so the
 * budget bounds load, not guesses.
 */
export const REFRESH_PER_IP: RateLimitBudget = { name: 'ip_refresh', points: 120, durationSeconds: 60, leasePoints: 10 };
/** Mails an admin sends to a user (password reset, verification): 60 per hour per client IP. */
export const ADMIN_USER_MAIL_PER_IP: RateLimitBudget = { name: 'ip_admin_user_mail', points: 60, durationSeconds: 3600 };

/** Mails a signed-in user has sent to an address of their choice (POST me/email): 20 per hour per client IP. */
export const SELF_SERVICE_MAIL_PER_IP: RateLimitBudget = { name: 'ip_self_service_mail', points: 20, durationSeconds: 3600 };

/**
 * Authenticated routes: 600 per minute per credential (session or API key), taken from Redis ten at
 * a time by each instance (a lease, docs/api-rules.md "Rate limits"): it is spent on every request.
 */
export const PER_CREDENTIAL: RateLimitBudget = { name: 'credential', points: 600, durationSeconds: 60, leasePoints: 10 };

/**
 * Every endpoint of a tenant's OpenID Provider (`/v1/{slug}/oidc/*`: authorization, token, userinfo,
 * introspection, revocation, logout, interactions, discovery): 300 requests per minute per client IP,
 * which also bounds the interaction rows anonymous authorization requests store (docs/oidc.md "Limits").
 * The hand-off procedures (`interaction/{uid}/details`, `/complete`) spend it through the table
 * below, each with its own count, as every procedure's per-IP budget is keyed by its path.
 */
export const OIDC_PROVIDER_PER_IP: RateLimitBudget = { name: 'ip_oidc_provider', points: 300, durationSeconds: 60 };
/** The provider's back-channel endpoints per client id (HTTP Basic or `client_id`): 600 per minute. */
export const OIDC_PROVIDER_PER_CLIENT: RateLimitBudget = { name: 'oidc_client', points: 600, durationSeconds: 60 };

/*
 * The tenant + email limit, counted per source IP so that an attacker elsewhere cannot exhaust it for
 * the real user (failed attempts only for `reset` procedures), is the workspace's lockout policy
 * (default 10 per 15 minutes): `lockoutBudget` in account-lockout.ts.
 */
/**
 * Account-wide bound across every IP (a distributed attack on one account): 100 failed attempts per
 * 15 minutes. Not applied to IPs the account successfully signed in from (see KNOWN_SIGN_IN_IP).
 */
export const ACCOUNT_FAILURES_ALL_IPS: RateLimitBudget = { name: 'account', points: 100, durationSeconds: 900 };
/**
 * How long an IP stays "known" for an account after a successful sign-in from it: 14 days (kept
 * under the 24.8-day ceiling of a Node.js timer, which the in-process store relies on).
 */
export const KNOWN_SIGN_IN_IP: RateLimitBudget = { name: 'account_known_ip', points: 1, durationSeconds: 14 * 24 * 3600 };


/**
 * 401 reasons that are not a failed guess and give the attempt back: those given only after the
 * password was accepted, and `reauthentication_required`, given before any password is looked at
 * (POST me/email). Every other 401 of a credential procedure counts as a failure.
 */
export const PASSWORD_ACCEPTED_REASONS: ReadonlySet<ErrorReason | undefined> = new Set<ErrorReason>([
  MFA_REASONS.mfaRequired,
  SIGN_IN_REASONS.userSuspended,
  SIGN_IN_REASONS.emailNotVerified,
  SESSION_REASONS.reauthenticationRequired,
]);
