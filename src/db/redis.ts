import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { redactUrl } from '../lib/redact-url.js';

/** Milliseconds a Redis connection attempt or command may take before it counts as failed. */
export const REDIS_TIMEOUT_MS = 1_000;

/**
 * An ioredis client that never blocks a request on an absent Redis: commands fail at once while
 * disconnected (no offline queue), connects and commands time out after REDIS_TIMEOUT_MS, and it
 * reconnects in the background forever (backoff up to 2 s). Outages and recoveries are logged once
 * each. The client starts connecting immediately.
 * @param url `redis://` or `rediss://` URL (`REDIS_URL`).
 */
export function createRedisClient(url: string, logger: Logger): Redis {
  const address = redactUrl(url, 'REDIS_URL');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: REDIS_TIMEOUT_MS,
    commandTimeout: REDIS_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    connectionName: 'tenant-identity',
  });
  let down = false;
  let everReady = false;
  redis.on('ready', () => {
    if (down) logger.info({ redis: address }, 'Redis is reachable again: rate limits are shared across instances again');
    else if (!everReady) logger.info({ redis: address }, 'connected to Redis');
    down = false;
    everReady = true;
  });
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger.warn(
      { redis: address, err: { message: err.message } },
      'Redis is unreachable: rate limits fall back to in-process counters of this instance until it is back',
    );
  });
  redis.on('close', () => {
    if (down) return;
    down = true;
    logger.warn({ redis: address }, 'Redis connection lost: rate limits fall back to in-process counters of this instance until it is back');
  });
  return redis;
}

/** Waits up to REDIS_TIMEOUT_MS for a connection that is being opened right now (start-up). */
async function settleFirstConnect(redis: Redis): Promise<void> {
  if (redis.status !== 'wait' && redis.status !== 'connecting' && redis.status !== 'connect') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, REDIS_TIMEOUT_MS);
    redis.once('ready', done);
    redis.once('error', done);
  });
}

/**
 * Readiness probe: resolves when Redis answers PING within REDIS_TIMEOUT_MS (waiting that long for
 * a connection still being opened); rejects at once while Redis is known to be unreachable.
 */
export async function pingRedis(redis: Redis): Promise<void> {
  await settleFirstConnect(redis);
  const answer = await redis.ping();
  if (answer !== 'PONG') throw new Error(`unexpected PING answer ${answer}`);
}

/** Closes the client: QUIT when connected, otherwise drops the reconnect loop. */
export async function closeRedis(redis: Redis): Promise<void> {
  redis.removeAllListeners('close');
  if (redis.status === 'ready') {
    await redis.quit().catch(() => redis.disconnect());
  } else {
    redis.disconnect();
  }
}
