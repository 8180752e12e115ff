/**
 * The shapes of docs/api-rules.md "Rate limits": a budget, and the limits a procedure declares in its
 * meta (`rateLimit`, read by the pipeline's `spendProcedureBudgets` step, src/middleware/pipeline.ts).
 * The budgets themselves are in src/services/rate-limits/rate-limit-rules.ts.
 */

/** A fixed-window budget: at most `points` hits per `durationSeconds` for one key. */
export interface RateLimitBudget {
  /** Stable name, part of every store key (`<prefix>:<name>:<key>`). */
  name: string;
  points: number;
  durationSeconds: number;
  /**
   * Points an instance takes from the shared store at a time and then spends in-process (a lease),
   * for budgets spent on nearly every request (the per-credential one): one store round trip per
   * `leasePoints` hits instead of one per hit. Never more than `points` are allowed in a window; a key
   * spent on N instances at once may be refused up to N × (`leasePoints` − 1) hits early (points
   * leased but unspent by the other instances). Unset: every hit goes to the store.
   */
  leasePoints?: number;
}

/**
 * How a credential-checking procedure feeds the per-account brute-force counters (OWASP
 * Authentication Cheat Sheet, "Protect against automated attacks").
 * - `reset`: only failed attempts count; a success clears the account+IP counter and marks the IP
 *   as one the account signed in from.
 * - `count`: every request counts (the procedure sends mail whatever the outcome), failures too.
 */
export type AccountAttemptMode = 'reset' | 'count';

/** The limits one procedure is subject to, declared in its meta (`rateLimit`). */
export interface ProcedureRateLimits {
  /** Requests per client IP; the key also holds the procedure path, so each route has its own budget. */
  ip?: RateLimitBudget;
  /** Brute-force accounting keyed by tenant slug + email read from the raw input. */
  account?: AccountAttemptMode;
}
