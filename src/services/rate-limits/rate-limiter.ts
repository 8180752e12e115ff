import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitBudget } from './rate-limit-rules.js';

/** The answer to one hit: allowed, or refused with the seconds until the window frees a point. */
export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const ALLOWED: RateLimitDecision = { allowed: true };

/** Points of a leased budget this instance took from the store and has not spent yet. */
interface Lease {
  remaining: number;
  /** Epoch milliseconds: the end of the store's window the points were taken from. */
  expiresAt: number;
  /** While the store is being asked for points: hits of the same key wait for that answer. */
  pending?: Promise<void>;
}

/** Keys with a lease held in-process at most (least recently used dropped first: its points go unspent, never over). */
const MAX_LEASES = 10_000;

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
  private readonly leases = new LRUCache<string, Lease>({ max: MAX_LEASES });
  private readonly refused = new Map<string, number>();
  private fallbacks = 0;

  /** Requests refused since start, by budget name (the metrics' `idp_rate_limit_rejections_total`). */
  get rejections(): ReadonlyMap<string, number> {
    return this.refused;
  }

  /**
   * Decisions taken on the in-process insurance counters because Redis was not ready (since start):
   * one per hit, or for a leased budget one per lease taken from them.
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
    const leasePoints = Math.min(budget.leasePoints ?? 1, this.scaledPoints(budget));
    return leasePoints > 1 ? this.consumeLeased(budget, key, leasePoints) : this.take(budget, key, 1).then((taken) => taken.decision);
  }

  /**
   * One hit of a leased budget (`RateLimitBudget.leasePoints`): spent from this instance's lease of
   * the key while it lasts and its window is open; otherwise `leasePoints` more are taken from the
   * store, the hits of the same key waiting meanwhile for that one answer.
   */
  private async consumeLeased(budget: RateLimitBudget, key: string, leasePoints: number): Promise<RateLimitDecision> {
    const id = `${budget.name}|${key}`;
    for (;;) {
      const lease = this.leases.get(id);
      if (lease?.pending) {
        await lease.pending;
        continue;
      }
      if (lease && lease.remaining > 0 && Date.now() < lease.expiresAt) {
        lease.remaining -= 1;
        return ALLOWED;
      }
      const fresh: Lease = { remaining: 0, expiresAt: 0 };
      let decision: RateLimitDecision = ALLOWED;
      fresh.pending = (async () => {
        try {
          const taken = await this.take(budget, key, leasePoints);
          decision = taken.decision;
          fresh.remaining = Math.max(0, taken.granted - 1);
          fresh.expiresAt = taken.expiresAt;
        } finally {
          fresh.pending = undefined;
        }
      })();
      this.leases.set(id, fresh);
      await fresh.pending;
      return decision;
    }
  }

  /**
   * Takes `points` hits of `key` from the store (or its in-process insurance while Redis is down).
   * @returns the decision for the hit that asked; `granted`, how many of the points fitted in the
   *   window (a refusal may still grant the last few); `expiresAt`, the window's end (epoch ms).
   */
  private async take(budget: RateLimitBudget, key: string, points: number): Promise<{ decision: RateLimitDecision; granted: number; expiresAt: number }> {
    if (this.storeShared() === false) this.fallbacks += 1;
    try {
      const res = await this.limiter(budget).consume(this.stored(key), points);
      return { decision: ALLOWED, granted: points, expiresAt: Date.now() + res.msBeforeNext };
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        const expiresAt = Date.now() + err.msBeforeNext;
        const granted = Math.max(0, Math.min(points, this.scaledPoints(budget) - (err.consumedPoints - points)));
        if (granted > 0) return { decision: ALLOWED, granted, expiresAt };
        this.refused.set(budget.name, (this.refused.get(budget.name) ?? 0) + 1);
        return { decision: { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) }, granted: 0, expiresAt };
      }
      this.failOpen(err, budget, 'consume');
      return { decision: ALLOWED, granted: 1, expiresAt: 0 };
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
