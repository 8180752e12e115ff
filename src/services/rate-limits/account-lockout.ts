import { DEFAULT_TENANT_POLICIES, type Tenant } from '../../entities/tenant.js';
import { normalizeEmail } from '../../lib/email.js';
import type { RateLimitBudget } from './rate-limit-rules.js';
import type { RateLimitService } from './rate-limiter.js';

/** A workspace's `lockout` setting (docs/api-rules.md "Workspace policies"). */
export type LockoutPolicy = Pick<Tenant, 'lockoutMaxFailedAttempts' | 'lockoutWindowSeconds'>;

/**
 * Counts the admin unlocks of one address (a generation number that is part of the lockout
 * counter's key, so an unlock starts every client's counter of the address afresh). Its window
 * outlasts the longest lockout window, so by the time it lapses and the generation starts at 0
 * again, every counter of the old generations has lapsed too. Its points only bound unlocks.
 */
export const ACCOUNT_UNLOCKS: RateLimitBudget = { name: 'account_unlocks', points: 1_000_000, durationSeconds: 2 * 86_400 };

/**
 * The failed-sign-in budget of one address and client under a workspace's lockout policy: the
 * tenant + email + client-IP counter of docs/api-rules.md "Rate limits" (formerly a fixed 10 per
 * 15 minutes, the policy's defaults), `maxFailedAttempts` per `windowSeconds`, × `RATE_LIMIT_SCALE`
 * like every threshold. One budget per distinct policy, named after it.
 */
export function lockoutBudget(policy: LockoutPolicy): RateLimitBudget {
  const { lockoutMaxFailedAttempts: points, lockoutWindowSeconds: durationSeconds } = policy;
  return { name: `account_ip:${points}:${durationSeconds}`, points, durationSeconds };
}

/**
 * The lockout policy of a live workspace, or the defaults for a slug no live workspace has (unknown
 * workspaces are counted alike, so the answer does not tell them apart).
 * @param tenant the live workspace of the request's slug, or null.
 */
export function lockoutPolicyOf(tenant: LockoutPolicy | null): LockoutPolicy {
  const { lockoutMaxFailedAttempts, lockoutWindowSeconds } = tenant ?? DEFAULT_TENANT_POLICIES;
  return { lockoutMaxFailedAttempts, lockoutWindowSeconds };
}

/**
 * The account lockout (docs/api-rules.md "Workspace policies"): names the counters of the brute-force
 * guard of src/middleware/rate-limit.ts, and lifts a lockout.
 */
export class AccountLockoutService {
  constructor(private readonly rateLimits: RateLimitService) {}

  /**
   * The key of the lockout counter of `accountKey` (`tenantSlug:email`) from `clientKey`, in the
   * address's current unlock generation.
   */
  async counterKey(accountKey: string, clientKey: string): Promise<string> {
    const generation = await this.rateLimits.count(ACCOUNT_UNLOCKS, accountKey);
    return `${accountKey}#${generation}|${clientKey}`;
  }

  /**
   * Lifts the lockout of an address (POST users/{userId}/unlock): every client's failure counter of
   * the address starts afresh (a new generation), and the account-wide counter is cleared.
   * @param accountWide the account-wide budget to clear (`ACCOUNT_FAILURES_ALL_IPS`).
   */
  async unlock(tenantSlug: string, email: string, accountWide: RateLimitBudget): Promise<void> {
    const accountKey = `${tenantSlug}:${normalizeEmail(email)}`;
    await this.rateLimits.consume(ACCOUNT_UNLOCKS, accountKey);
    await this.rateLimits.reset(accountWide, accountKey);
  }
}
