import type { ErrorReason } from '../../lib/errors.js';
import { MFA_REASONS } from '../mfa/mfa-errors.js';
import { SESSION_REASONS } from '../sessions/session-errors.js';
import { SIGN_IN_REASONS } from '../sign-in/sign-in-errors.js';

/**
 * The rate limits of docs/api-rules.md "Rate limits", in one table keyed by tRPC procedure path. Every
 * `points` value is multiplied by `RATE_LIMIT_SCALE` when the limiter is built. Procedures that are
 * not listed carry no per-IP or per-account limit (authenticated routes still get the per-credential
 * budget in src/middleware/auth.ts).
 */

/** A fixed-window budget: at most `points` hits per `durationSeconds` for one key. */
export interface RateLimitBudget {
  /** Stable name, part of every store key (`<prefix>:<name>:<key>`). */
  name: string;
  points: number;
  durationSeconds: number;
}

/**
 * How a credential-checking procedure feeds the per-account brute-force counters (OWASP
 * Authentication Cheat Sheet, "Protect against automated attacks").
 * - `reset`: only failed attempts count; a success clears the account+IP counter and marks the IP
 *   as one the account signed in from.
 * - `count`: every request counts (the procedure sends mail whatever the outcome), failures too.
 */
export type AccountAttemptMode = 'reset' | 'count';

/** The limits one procedure is subject to. */
export interface ProcedureRateLimits {
  /** Requests per client IP; the key also holds the procedure path, so each route has its own budget. */
  ip?: RateLimitBudget;
  /** Brute-force accounting keyed by tenant slug + email read from the raw input. */
  account?: AccountAttemptMode;
}

/** Login, request-email-otp, the initial TOTP steps, IdP callback: 100 requests per minute per IP. */
export const SIGN_IN_PER_IP: RateLimitBudget = { name: 'ip_sign_in', points: 100, durationSeconds: 60 };
/** Signup, tenant creation, invite acceptance: 20 per hour per IP. */
export const ACCOUNT_CREATION_PER_IP: RateLimitBudget = { name: 'ip_account_creation', points: 20, durationSeconds: 3600 };
/** Refresh: 120 per minute per IP. */
export const REFRESH_PER_IP: RateLimitBudget = { name: 'ip_refresh', points: 120, durationSeconds: 60 };
/** Authenticated routes: 600 per minute per credential (session or API key). */
/** Mails an admin sends to a user (password reset, verification): 60 per hour per client IP. */
export const ADMIN_USER_MAIL_PER_IP: RateLimitBudget = { name: 'ip_admin_user_mail', points: 60, durationSeconds: 3600 };

/** Mails a signed-in user has sent to an address of their choice (POST me/email): 20 per hour per client IP. */
export const SELF_SERVICE_MAIL_PER_IP: RateLimitBudget = { name: 'ip_self_service_mail', points: 20, durationSeconds: 3600 };

export const PER_CREDENTIAL: RateLimitBudget = { name: 'credential', points: 600, durationSeconds: 60 };

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
 * Rules by tRPC procedure path (the names the tRPC client calls). A key that names no procedure
 * fails test/security/rate-limit-rules.test.ts, so renaming a procedure cannot drop its limit silently.
 */
export const PROCEDURE_RATE_LIMITS: Readonly<Record<string, ProcedureRateLimits>> = {
  'auth.login': { ip: SIGN_IN_PER_IP, account: 'reset' },
  'auth.requestEmailOtp': { ip: SIGN_IN_PER_IP, account: 'count' },
  'auth.totpInitialEnroll': { ip: SIGN_IN_PER_IP, account: 'reset' },
  'auth.totpInitialVerify': { ip: SIGN_IN_PER_IP, account: 'reset' },
  // No email in the body: the router applies the account budget of the token's user (withAccountBudget).
  'auth.mfaComplete': { ip: SIGN_IN_PER_IP },
  'idp.start': { ip: SIGN_IN_PER_IP },
  'idp.callback': { ip: SIGN_IN_PER_IP },
  'idp.signInOptions': { ip: SIGN_IN_PER_IP },
  'browser.idpStart': { ip: SIGN_IN_PER_IP },
  'browser.idpCallback': { ip: SIGN_IN_PER_IP },
  // Enterprise SSO (docs/sso.md): starting, completing and testing a sign-in; the SAML ACS and the
  // OpenID Connect callback (routes outside the procedures) spend the same budget (src/rest/sso-routes.ts).
  'sso.start': { ip: SIGN_IN_PER_IP },
  'sso.test': { ip: SIGN_IN_PER_IP },
  'sso.testResult': { ip: SIGN_IN_PER_IP },
  'browser.ssoComplete': { ip: SIGN_IN_PER_IP },
  'auth.requestEmailVerification': { ip: SIGN_IN_PER_IP, account: 'count' },
  'auth.requestPasswordReset': { ip: SIGN_IN_PER_IP, account: 'count' },
  'auth.completePasswordReset': { ip: SIGN_IN_PER_IP },
  'auth.verifyEmail': { ip: SIGN_IN_PER_IP },
  'auth.verifyEmailLink': { ip: SIGN_IN_PER_IP },
  'auth.confirmEmailChange': { ip: SIGN_IN_PER_IP },
  // The password check runs in login's account budget (withAccountBudget in the router).
  'me.requestEmailChange': { ip: SELF_SERVICE_MAIL_PER_IP },
  'auth.signup': { ip: ACCOUNT_CREATION_PER_IP },
  'tenants.create': { ip: ACCOUNT_CREATION_PER_IP },
  'invites.accept': { ip: ACCOUNT_CREATION_PER_IP },
  'auth.refresh': { ip: REFRESH_PER_IP },
  'browser.refresh': { ip: REFRESH_PER_IP },
  // Passkey sign-in: the verify route has no email; the router applies the credential owner's account budget.
  'auth.passkeyOptions': { ip: SIGN_IN_PER_IP },
  'auth.passkeyVerify': { ip: SIGN_IN_PER_IP },
  'users.sendPasswordReset': { ip: ADMIN_USER_MAIL_PER_IP },
  // an admin creating a user may mail them the link to set a password
  'users.create': { ip: ADMIN_USER_MAIL_PER_IP },
  'users.sendVerificationMail': { ip: ADMIN_USER_MAIL_PER_IP },
  // The OpenID Provider's hand-off to the hosted sign-in page (src/routers/oidc-interaction.ts): the
  // provider's per-IP budget, each route its own; finishing also spends the session's per-credential one.
  'oidcInteraction.details': { ip: OIDC_PROVIDER_PER_IP },
  'oidcInteraction.complete': { ip: OIDC_PROVIDER_PER_IP },
};

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
