import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

/** One AES-256 key of the field-encryption keyring (`ENCRYPTION_KEYS`, docs/operations.md). */
export interface KeyringEntry {
  /** Version label as written in the variable, e.g. `v1`. Stored beside every ciphertext. */
  version: string;
  /** 32 raw key bytes. */
  key: Buffer;
}

/** The validated service configuration (README.md configuration table, docs/operations.md). */
export interface Config {
  nodeEnv: string;
  port: number;
  host: string;
  /** `postgres://…` of a real server, or undefined for the embedded PGlite default. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Most PostgreSQL connections this instance holds (`DATABASE_POOL_MAX`). */
  databasePoolMax: number;
  redisUrl: string | undefined;
  /** Prefix of every Redis key this service writes; instances sharing limits use the same one. */
  redisKeyPrefix: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** HS256 key bytes, at least 32. */
  jwtSecret: Buffer;
  /** Ordered keyring: the last entry encrypts, every entry decrypts. */
  encryptionKeys: KeyringEntry[];
  publicUrl: string;
  idpIssuer: string;
  /** Multiplier applied to every rate-limit threshold; always > 0. */
  rateLimitScale: number;
  /** Invites one tenant may create in any 24 hours (`INVITES_PER_TENANT_PER_DAY`); not scaled by `rateLimitScale`. */
  invitesPerTenantPerDay: number;
  /**
   * Express `trust proxy`: `false` (socket address), `true` (left-most `X-Forwarded-For` entry), or
   * the addresses/subnets of the proxies to trust (the client is the right-most untrusted hop).
   */
  trustProxy: boolean | string[];
  logLevel: string;
  /** Origins allowed by CORS; empty means no cross-origin browser access. */
  corsOrigins: string[];
  /** Days a soft-deleted user is kept before erasure. */
  userRetentionDays: number;
  /** Seconds between two runs of the erasure sweep of each instance; 0 turns the timer off. */
  erasureSweepIntervalSeconds: number;
  /** HTTP worker processes `npm start` runs (node:cluster); 1 = a single process. */
  webConcurrency: number;
  /** Old-generation heap limit of each service process in MiB (`MAX_HEAP_MB`; 0 = Node's own sizing; docs/operations.md "Memory"). */
  maxHeapMb: number;
  /** Whether this instance runs the job-queue worker (mail, webhooks); `npm run worker` runs it alone. */
  jobWorkerEnabled: boolean;
  /** Whether Prometheus metrics are served (`METRICS_ENABLED`, docs/operations.md "Metrics"). */
  metricsEnabled: boolean;
  /** Port of the separate metrics listener (`METRICS_PORT`; 0 = any free port). */
  metricsPort: number;
  /** Address the metrics listener binds to (`METRICS_HOST`; default `HOST`), e.g. a private interface only. */
  metricsHost: string;
  /** Name of the queue this instance writes to and works on; instances sharing work use the same one. */
  jobQueue: string;
  /** Milliseconds between two polls of the job queue when it was found empty. */
  jobPollIntervalMs: number;
  /** Seconds before the first retry of a failed job; each later retry doubles it (with jitter), capped at 6 hours. */
  jobRetryBaseSeconds: number;
  /** Days a job that used up its attempts (`failed_at`) is kept for inspection before the retention sweep deletes it. */
  jobFailedRetentionDays: number;
  /** Days a webhook delivery-log row is kept before the retention sweep deletes it. */
  webhookDeliveryRetentionDays: number;
  /** Seconds between two retention sweeps of each worker; 0 turns them off. */
  jobRetentionSweepSeconds: number;
  /** Whether webhooks may target loopback, private and link-local addresses (development, tests). */
  webhookAllowPrivateTargets: boolean;
  /**
   * Whether a tenant's own OpenID provider (`PUT oauth/idp/credentials` `issuer`) may be on a loopback,
   * private or link-local address, and on plain HTTP when loopback (development, tests; docs/idp.md).
   */
  idpAllowPrivateIssuers: boolean;
  /** Seconds an endpoint may keep failing before it is disabled and the tenant's admins are mailed. */
  webhookDisableAfterSeconds: number;
  /** When set, `POST /v1/tenants` needs `Authorization: Bearer <this token>` (docs/api-rules.md "Users and sign-up"). */
  tenantCreationToken: string | undefined;
  /** Names of secrets that were generated into DATA_DIR because the variable was unset. */
  generatedSecrets: string[];
}

/** Raised when the environment holds a value the service cannot run with; the message names it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Default old-generation heap limit in MiB (`MAX_HEAP_MB`, docs/operations.md "Memory"). */
export const DEFAULT_MAX_HEAP_MB = 128;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * True when `url` is plain HTTP to a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`): an OpenID
 * provider on the same machine, for development and tests. Only such issuers may skip TLS.
 */
export function isLoopbackHttpUrl(url: URL): boolean {
  return url.protocol === 'http:' && (LOOPBACK_HOSTS.has(url.hostname) || /^127(\.\d{1,3}){3}$/.test(url.hostname));
}
/** Express's names for address ranges, accepted in a `TRUST_PROXY` list. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** `TRUST_PROXY` as a comma-separated list of proxy addresses, CIDR subnets or range names. */
const trustedProxyList = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .refine(
    (list) => list.length > 0 && list.every((entry) => {
      const [address = '', bits, extra] = entry.split('/');
      return PROXY_RANGE_NAMES.has(entry) || (isIP(address) !== 0 && extra === undefined && (bits === undefined || /^\d{1,3}$/.test(bits)));
    }),
    'must be true, false, or a comma-separated list of proxy addresses, CIDR subnets, loopback, linklocal or uniquelocal',
  );

const envSchema = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 _ . : -')
    .default('tenant-identity'),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be a smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('no-reply@localhost'),
  JWT_SECRET: z.string().optional(),
  ENCRYPTION_KEYS: z.string().optional(),
  PUBLIC_URL: z.url().optional(),
  IDP_ISSUER: z
    .url()
    .refine((v) => new URL(v).protocol === 'https:' || isLoopbackHttpUrl(new URL(v)), 'must be an https:// URL (http:// only on a loopback host)')
    .default('https://accounts.google.com'),
  RATE_LIMIT_SCALE: z.coerce
    .number()
    .refine((n) => Number.isFinite(n) && n > 0, 'must be a number greater than 0')
    .default(1),
  INVITES_PER_TENANT_PER_DAY: z.coerce.number().int().min(1).max(1_000_000).default(100),
  TRUST_PROXY: z.union([booleanString, trustedProxyList]).default(false),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  CORS_ORIGINS: z.string().default(''),
  USER_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  ERASURE_SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(604_800).default(3600),
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  MAX_HEAP_MB: z.coerce.number().int().refine((mb) => mb === 0 || (mb >= 64 && mb <= 65_536), 'must be 0 (no limit) or 64 to 65536').default(DEFAULT_MAX_HEAP_MB),
  JOB_WORKER: booleanString.default(true),
  METRICS_ENABLED: booleanString.default(false),
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
  METRICS_HOST: z.string().min(1).optional(),
  JOB_QUEUE: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 _ . : -')
    .default('default'),
  JOB_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  JOB_RETRY_BASE_SECONDS: z.coerce.number().min(0.01).max(3600).default(30),
  JOB_FAILED_RETENTION_DAYS: z.coerce.number().min(0).max(3650).default(7),
  WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().min(0).max(3650).default(30),
  JOB_RETENTION_SWEEP_SECONDS: z.coerce.number().min(0).max(604_800).default(3600),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanString.default(false),
  IDP_ALLOW_PRIVATE_ISSUERS: booleanString.default(false),
  TENANT_CREATION_TOKEN: z.string().min(16, 'must be at least 16 characters').max(512).optional(),
  WEBHOOK_DISABLE_AFTER_SECONDS: z.coerce.number().int().min(1).max(30 * 86_400).default(3 * 86_400),
});

/**
 * Parses `CORS_ORIGINS`: comma-separated exact origins (`https://app.example.com`,
 * `http://localhost:5173`). A wildcard, a path or anything that is not an http(s) origin is refused:
 * CORS must name every browser origin it trusts (OWASP ASVS V3.4).
 * @throws ConfigError naming the offending entry.
 */
export function parseCorsOrigins(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      let origin: string | undefined;
      try {
        const url = new URL(entry);
        if ((url.protocol === 'http:' || url.protocol === 'https:') && !entry.includes('*')) origin = url.origin;
      } catch {
        origin = undefined;
      }
      if (!origin || origin !== entry.replace(/\/$/, '')) {
        throw new ConfigError(`CORS_ORIGINS: "${entry}" is not an exact http(s) origin such as https://app.example.com (no wildcard, no path)`);
      }
      return origin;
    });
}

/**
 * Parses `ENCRYPTION_KEYS` (`v1:<base64 32 bytes>,v2:<…>`).
 * @throws ConfigError when an entry is malformed, a version repeats or a key is not 32 bytes.
 */
export function parseKeyring(value: string): KeyringEntry[] {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^([A-Za-z0-9_-]{1,16}):([A-Za-z0-9+/=_-]+)$/.exec(entry);
      if (!match) throw new ConfigError('ENCRYPTION_KEYS: each entry must be <version>:<base64 key>');
      const key = Buffer.from(match[2]!, 'base64');
      if (key.length !== 32) {
        throw new ConfigError(`ENCRYPTION_KEYS: key ${match[1]} must decode to 32 bytes, got ${key.length}`);
      }
      return { version: match[1]!, key };
    });
  if (entries.length === 0) throw new ConfigError('ENCRYPTION_KEYS: at least one key is required');
  const versions = new Set(entries.map((e) => e.version));
  if (versions.size !== entries.length) throw new ConfigError('ENCRYPTION_KEYS: key versions must be unique');
  return entries;
}

interface DevSecrets {
  jwtSecret?: string;
  encryptionKeys?: string;
}

/** Reads, or creates once, the generated development secrets in `DATA_DIR/secrets.json` (mode 0600). */
function loadDevSecrets(dataDir: string, need: { jwt: boolean; keys: boolean }): Required<DevSecrets> {
  const file = path.join(dataDir, 'secrets.json');
  let stored: DevSecrets = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, 'utf8')) as DevSecrets;
  let changed = false;
  if (need.jwt && !stored.jwtSecret) {
    stored.jwtSecret = randomBytes(48).toString('base64');
    changed = true;
  }
  if (need.keys && !stored.encryptionKeys) {
    stored.encryptionKeys = `v1:${randomBytes(32).toString('base64')}`;
    changed = true;
  }
  if (changed) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return { jwtSecret: stored.jwtSecret ?? '', encryptionKeys: stored.encryptionKeys ?? '' };
}

/**
 * Validates the environment and builds the configuration (README.md configuration table, docs/operations.md).
 * Unset `JWT_SECRET` / `ENCRYPTION_KEYS` are generated once into `DATA_DIR` outside production.
 * @param env usually `process.env`.
 * @throws ConfigError with a message naming the variable and what is wrong with it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(
    Object.keys(envSchema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]),
  );
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const dataDir = path.resolve(e.DATA_DIR);
  const generatedSecrets: string[] = [];

  if (env.TENANT_CREATION_TOKEN !== undefined && env.TENANT_CREATION_TOKEN.trim() === '') {
    // an unset CI variable would otherwise leave workspace creation open without a word (docs/operations.md)
    throw new ConfigError('TENANT_CREATION_TOKEN is set but empty: give it a token of at least 16 characters, or unset it to leave workspace creation open');
  }
  if (production && (!e.JWT_SECRET || !e.ENCRYPTION_KEYS)) {
    throw new ConfigError('JWT_SECRET and ENCRYPTION_KEYS are required when NODE_ENV=production');
  }
  let jwtSecretText = e.JWT_SECRET;
  let keyringText = e.ENCRYPTION_KEYS;
  if (!jwtSecretText || !keyringText) {
    const dev = loadDevSecrets(dataDir, { jwt: !jwtSecretText, keys: !keyringText });
    if (!jwtSecretText) {
      jwtSecretText = dev.jwtSecret;
      generatedSecrets.push('JWT_SECRET');
    }
    if (!keyringText) {
      keyringText = dev.encryptionKeys;
      generatedSecrets.push('ENCRYPTION_KEYS');
    }
  }
  if (e.WEB_CONCURRENCY > 1 && !e.DATABASE_URL) {
    throw new ConfigError('WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded database serves one process only');
  }
  const jwtSecret = Buffer.from(jwtSecretText, 'utf8');
  if (jwtSecret.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 bytes');

  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    databasePoolMax: e.DATABASE_POOL_MAX,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    jwtSecret,
    encryptionKeys: parseKeyring(keyringText),
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    idpIssuer: e.IDP_ISSUER,
    rateLimitScale: e.RATE_LIMIT_SCALE,
    invitesPerTenantPerDay: e.INVITES_PER_TENANT_PER_DAY,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    corsOrigins: parseCorsOrigins(e.CORS_ORIGINS),
    userRetentionDays: e.USER_RETENTION_DAYS,
    erasureSweepIntervalSeconds: e.ERASURE_SWEEP_INTERVAL_SECONDS,
    webConcurrency: e.WEB_CONCURRENCY,
    maxHeapMb: e.MAX_HEAP_MB,
    jobWorkerEnabled: e.JOB_WORKER,
    metricsEnabled: e.METRICS_ENABLED,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST ?? e.HOST,
    jobQueue: e.JOB_QUEUE,
    jobPollIntervalMs: e.JOB_POLL_INTERVAL_MS,
    jobRetryBaseSeconds: e.JOB_RETRY_BASE_SECONDS,
    jobFailedRetentionDays: e.JOB_FAILED_RETENTION_DAYS,
    webhookDeliveryRetentionDays: e.WEBHOOK_DELIVERY_RETENTION_DAYS,
    jobRetentionSweepSeconds: e.JOB_RETENTION_SWEEP_SECONDS,
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    idpAllowPrivateIssuers: e.IDP_ALLOW_PRIVATE_ISSUERS,
    tenantCreationToken: e.TENANT_CREATION_TOKEN,
    webhookDisableAfterSeconds: e.WEBHOOK_DISABLE_AFTER_SECONDS,
    generatedSecrets,
  };
}

/**
 * {@link loadConfig} for a command-line entry point (`npm start`, `npm run keys:rotate`): a
 * ConfigError is written to stderr and the process exits with status 2.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
