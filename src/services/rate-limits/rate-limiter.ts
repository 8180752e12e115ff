import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitBudget } from './rate-limit-rules.js';

/** The answer to one hit: allowed, or refused with the seconds until the window frees a point. */
export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimitServiceOptions {
  /** `RATE_LIMIT_SCALE`: multiplies every budget's points (> 0). */
  scale: number;
  /** Prefix of every store key, e.g. `tenant-identity` → `tenant-identity:rl:<budget>:<keyed digest>`. */
  keyPrefix: string;
  /**
   * The secret of the keyed digest that stands for a key in the store (HMAC-SHA-256), the same on
   * every instance: Redis never holds an address, an email or a token id in clear.
   */
  keySecret: Buffer;
  /** Shared store; without it counters live in this process only. */
  redis?: Redis;
  logger: Logger;
}

/**
 * Rate limiting on rate-limiter-flexible (docs/api-rules.md "Rate limits"). With Redis every instance
 * shares the counters; each Redis limiter has an in-process insurance limiter with the same budget,
 * used while Redis is unreachable, so the service keeps answering and keeps limiting per instance.
 * A limiter failure that is not a refusal never fails the request (fail open, logged). Keys reach the
 * store as keyed digests (docs/security.md "Rate limits"), never as the addresses or emails they name.
 */
export class RateLimitService {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly refused = new Map<string, number>();
  private fallbacks = 0;

  /** Requests refused since start, by budget name (the metrics' `idp_rate_limit_rejections_total`). */
  get rejections(): ReadonlyMap<string, number> {
    return this.refused;
  }

  /**
   * Decisions taken on the in-process insurance counters because Redis was not ready (since start).
   * While this grows, every limit holds per instance only: N instances allow N times the limit.
   */
  get fallbackDecisions(): number {
    return this.fallbacks;
  }

  /** True while the shared store (Redis) is connected, false while limits fall back to this process, undefined without Redis. */
  storeShared(): boolean | undefined {
    return this.options.redis ? this.options.redis.status === 'ready' : undefined;
  }

  constructor(private readonly options: RateLimitServiceOptions) {}

  /** A budget's threshold after `RATE_LIMIT_SCALE`, at least 1. */
  scaledPoints(budget: RateLimitBudget): number {
    return Math.max(1, Math.round(budget.points * this.options.scale));
  }

  private limiter(budget: RateLimitBudget): RateLimiterAbstract {
    let limiter = this.limiters.get(budget.name);
    if (!limiter) {
      const opts = { points: this.scaledPoints(budget), duration: budget.durationSeconds, keyPrefix: `${this.options.keyPrefix}:rl:${budget.name}` };
      const { redis } = this.options;
      limiter = redis
        ? new RateLimiterRedis({ ...opts, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(opts) })
        : new RateLimiterMemory(opts);
      this.limiters.set(budget.name, limiter);
    }
    return limiter;
  }

  /** What stands for `key` in the store: HMAC-SHA-256 under `keySecret`, base64url (43 characters). */
  private stored(key: string): string {
    return createHmac('sha256', this.options.keySecret).update(key).digest('base64url');
  }

  private failOpen(err: unknown, budget: RateLimitBudget, operation: string): void {
    this.options.logger.error({ err, budget: budget.name, operation }, 'rate limiter failed; request allowed');
  }

  /**
   * Counts one hit of `key` against `budget`.
   * @returns `{allowed:false, retryAfterSeconds}` (whole seconds, ≥ 1) once the budget is spent.
   */
  async consume(budget: RateLimitBudget, key: string): Promise<RateLimitDecision> {
    if (this.storeShared() === false) this.fallbacks += 1;
    try {
      await this.limiter(budget).consume(this.stored(key));
      return { allowed: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        this.refused.set(budget.name, (this.refused.get(budget.name) ?? 0) + 1);
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
      }
      this.failOpen(err, budget, 'consume');
      return { allowed: true };
    }
  }

  /** Gives back one hit counted by `consume` (the request turned out not to be an attempt). */
  async refund(budget: RateLimitBudget, key: string): Promise<void> {
    await this.limiter(budget).reward(this.stored(key), 1).catch((err: unknown) => this.failOpen(err, budget, 'refund'));
  }

  /** Clears `key`'s counter in `budget`. */
  async reset(budget: RateLimitBudget, key: string): Promise<void> {
    await this.limiter(budget).delete(this.stored(key)).catch((err: unknown) => this.failOpen(err, budget, 'reset'));
  }

  /** Records `key` as present for `budget.durationSeconds` (a marker, not a count). */
  async mark(budget: RateLimitBudget, key: string): Promise<void> {
    await this.limiter(budget).set(this.stored(key), 1, budget.durationSeconds).catch((err: unknown) => this.failOpen(err, budget, 'mark'));
  }

  /** How many hits of `key` count in `budget`'s current window (0 when none; fails open to 0). */
  async count(budget: RateLimitBudget, key: string): Promise<number> {
    try {
      return (await this.limiter(budget).get(this.stored(key)))?.consumedPoints ?? 0;
    } catch (err) {
      this.failOpen(err, budget, 'count');
      return 0;
    }
  }

  /** True while a `mark` of `key` is alive. */
  async isMarked(budget: RateLimitBudget, key: string): Promise<boolean> {
    try {
      const res = await this.limiter(budget).get(this.stored(key));
      return res !== null && res.consumedPoints > 0;
    } catch (err) {
      this.failOpen(err, budget, 'isMarked');
      return false;
    }
  }
}

/**
 * The part of a client IP that identifies one client for rate limiting: the address itself for
 * IPv4 (also when IPv4-mapped, `::ffff:a.b.c.d`), the /64 prefix for IPv6, since one subscriber
 * usually holds a whole /64 and could otherwise rotate through it.
 */
export function rateLimitClientKey(ip: string | null): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('%')[0]!.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups] : headGroups;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
