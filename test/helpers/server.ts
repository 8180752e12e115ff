import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { REDACTED_PATHS } from '../../src/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';

/** Fixed test secrets: 48-byte JWT key and one 32-byte keyring entry. */
export const TEST_JWT_SECRET = 'test-jwt-secret-0123456789-0123456789-0123456789';
export const TEST_ENCRYPTION_KEYS = `v1:${Buffer.alloc(32, 7).toString('base64')}`;

/** A service instance started for a test file, with every log line it wrote. */
/**
 * A pino logger as the service makes it (same redaction) whose lines are kept in `logs`, one JSON
 * string a line, for tests to read what was logged.
 */
export function capturingLogger(level: string): { logger: pino.Logger; logs: string[] } {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink), logs };
}

export interface TestServer extends RunningServer {
  /** Every JSON log line written so far (for secret-hygiene assertions). */
  logs: string[];
}

/**
 * Starts the whole service in-process on a free loopback port against this run's database
 * (see global-setup.ts). `env` overrides any variable of README "Configuration".
 */
export async function startTestServer(env: Record<string, string | undefined> = {}): Promise<TestServer> {
  const config = loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: inject('databaseUrl'),
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'idp-data-')),
    JWT_SECRET: TEST_JWT_SECRET,
    ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    RATE_LIMIT_SCALE: '1000',
    LOG_LEVEL: 'debug',
    // the queue worker polls often and retries fast, so mail and webhooks arrive within test time
    JOB_POLL_INTERVAL_MS: '25',
    JOB_RETRY_BASE_SECONDS: '0.05',
    // test files run in parallel on one database: each instance works its own queue unless told to share one
    JOB_QUEUE: `test-${randomBytes(6).toString('hex')}`,
    // the embedded PGlite socket multiplexes one session: one connection per instance keeps protocol messages apart
    DATABASE_POOL_MAX: inject('embeddedDatabase') ? '1' : '10',
    ...env,
  });
  const { logger, logs } = capturingLogger(config.logLevel);
  const server = await startServer(config, logger);
  return { ...server, logs };
}
