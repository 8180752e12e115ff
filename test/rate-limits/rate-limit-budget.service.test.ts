import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type AppServices } from '../../src/app-services.js';
import { ACCOUNT_FAILURES_ALL_IPS, type RateLimitBudget } from '../../src/services/rate-limits/rate-limit-rules.js';
import { ACCOUNT_UNLOCKS } from '../../src/services/rate-limits/account-lockout.js';
import { unique } from '../helpers/api.js';
import { deleteRedisKeys } from '../helpers/redis.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: a rate-limit budget (RateLimitService, docs/api-rules.md "Rate limits") on Redis at
 * `TEST_REDIS_URL` when set (shared by every instance, keys stored as keyed digests), else in memory;
 * and the account lockout's unlock (AccountLockoutService).
 */

const redisUrl = process.env.TEST_REDIS_URL;
const prefix = `svc-rl-${unique()}`;
const suite = useServices({ RATE_LIMIT_SCALE: '1', ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix } : {}) });

/** A second instance's services on the same configuration (and Redis, when set). */
let other: AppServices;

beforeAll(async () => {
  other = createServices(suite.config, suite.services.logger, suite.orm);
  for (const services of [suite.services, other]) await Promise.all([...services.readiness.values()].map((probe) => probe()));
});

afterAll(async () => {
  for (const dispose of other?.disposers ?? []) await dispose();
  if (redisUrl) await deleteRedisKeys(redisUrl, prefix);
});

const budget = (points: number): RateLimitBudget => ({ name: `svc_test_${unique()}`, points, durationSeconds: 60 });

describe('RateLimitService', () => {
  it('allows the budget\'s points per key, then refuses with the seconds until a point frees', async () => {
    const limits = suite.services.rateLimits;
    expect(limits.storeShared()).toBe(redisUrl ? true : undefined);
    const b = budget(3);
    for (let i = 0; i < 3; i += 1) expect(await limits.consume(b, 'client-a')).toEqual({ allowed: true });
    const refused = await limits.consume(b, 'client-a');
    expect(refused.allowed).toBe(false);
    if (!refused.allowed) expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    if (!refused.allowed) expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await limits.consume(b, 'client-b')).toEqual({ allowed: true });
    expect(limits.rejections.get(b.name)).toBe(1);

    await limits.refund(b, 'client-a');
    expect(await limits.count(b, 'client-a')).toBe(3);
    await limits.reset(b, 'client-a');
    expect(await limits.count(b, 'client-a')).toBe(0);
    expect(await limits.consume(b, 'client-a')).toEqual({ allowed: true });
  });

  it('shares counters between instances on Redis, and keeps them per instance in memory', async () => {
    const b = budget(2);
    await suite.services.rateLimits.consume(b, 'shared-key');
    await suite.services.rateLimits.consume(b, 'shared-key');
    const atOther = await other.rateLimits.consume(b, 'shared-key');
    expect(atOther.allowed).toBe(!redisUrl);
  });

  it('a leased budget takes its points from the store ten at a time and still allows exactly its points, in a burst too', async () => {
    const limits = suite.services.rateLimits;
    const b: RateLimitBudget = { ...budget(25), leasePoints: 10 };
    expect(await limits.consume(b, 'leased-a')).toEqual({ allowed: true });
    // one hit spent, ten taken from the store
    expect(await limits.count(b, 'leased-a')).toBe(10);
    const rest = await Promise.all(Array.from({ length: 30 }, () => limits.consume(b, 'leased-a')));
    expect(rest.filter((d) => d.allowed)).toHaveLength(24);
    const refused = rest.find((d) => !d.allowed);
    if (refused && !refused.allowed) expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await limits.consume(b, 'leased-b')).toEqual({ allowed: true });
  });

  it('a leased budget opens again with the store\'s next window', async () => {
    const limits = suite.services.rateLimits;
    const b: RateLimitBudget = { name: `svc_test_${unique()}`, points: 3, durationSeconds: 1, leasePoints: 2 };
    for (let i = 0; i < 3; i += 1) expect(await limits.consume(b, 'window')).toEqual({ allowed: true });
    expect((await limits.consume(b, 'window')).allowed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await limits.consume(b, 'window')).toEqual({ allowed: true });
  });

  it.runIf(redisUrl)('instances sharing a leased budget never allow more than its points together', async () => {
    const b: RateLimitBudget = { ...budget(20), leasePoints: 10 };
    expect(await suite.services.rateLimits.consume(b, 'two-instances')).toEqual({ allowed: true });
    const atOther = [];
    for (let i = 0; i < 11; i += 1) atOther.push(await other.rateLimits.consume(b, 'two-instances'));
    // the other instance gets the ten points left in the store; this one still holds nine of its lease
    expect(atOther.filter((d) => d.allowed)).toHaveLength(10);
    expect(atOther[10]!.allowed).toBe(false);
    const here = [];
    for (let i = 0; i < 10; i += 1) here.push(await suite.services.rateLimits.consume(b, 'two-instances'));
    expect(here.filter((d) => d.allowed)).toHaveLength(9);
  });

  it.runIf(redisUrl)('stores keyed digests in Redis, never the key itself', async () => {
    const email = `limited-${unique()}@example.com`;
    const b = budget(5);
    await suite.services.rateLimits.consume(b, email);
    const redis = new Redis(redisUrl!);
    try {
      const keys = await redis.keys(`${prefix}:rl:${b.name}:*`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).not.toContain(email);
      expect(keys[0]).toMatch(new RegExp(`^${prefix}:rl:${b.name}:[A-Za-z0-9_-]{43}$`));
    } finally {
      await redis.quit();
    }
  });
});

describe('AccountLockoutService.unlock', () => {
  it('starts every client\'s failure counter of the address afresh and clears the account-wide one', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const accountKey = `${tenant.slug}:${user.email}`;
    const { accountLockout, rateLimits, userAdministration } = suite.services;
    const before = await accountLockout.counterKey(accountKey, '203.0.113.7');
    await rateLimits.consume(ACCOUNT_FAILURES_ALL_IPS, accountKey);
    expect(await rateLimits.count(ACCOUNT_FAILURES_ALL_IPS, accountKey)).toBe(1);

    await userAdministration.unlock(suite.scope(tenant, actor), user.id);
    const after = await accountLockout.counterKey(accountKey, '203.0.113.7');
    expect(after).not.toBe(before);
    expect(await rateLimits.count(ACCOUNT_UNLOCKS, accountKey)).toBe(1);
    expect(await rateLimits.count(ACCOUNT_FAILURES_ALL_IPS, accountKey)).toBe(0);
    expect((await suite.auditOf(tenant.id, 'UserUnlocked')).map((e) => e.targetId)).toEqual([user.id]);
  });
});
