import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, inject } from 'vitest';
import { createServices, type AppServices } from '../../src/app-services.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase } from '../../src/db/orm.js';
import type { Tenant } from '../../src/entities/tenant.js';
import type { User, UserRole } from '../../src/entities/user.js';
import { SYSTEM_ACTOR, type Actor, type RequestMeta } from '../../src/lib/request-meta.js';
import { userActor, type RequestScope } from '../../src/lib/request-scope.js';
import type { AuditItem } from '../../src/queries/audit-event.js';
import type { AuditAction } from '../../src/entities/audit-event.js';
import type { ClaimedJob } from '../../src/services/jobs/job-queue.js';
import { queuedMailAad, type MailMessage } from '../../src/services/mail/mailer.js';
import type { IssuedTokens } from '../../src/services/sessions/session-service.js';
import { findLiveTenantBySlug } from '../../src/queries/tenant.js';
import { findLiveUserById, updateRoleAndStatus } from '../../src/queries/user.js';
import { PASSWORD, unique } from './api.js';
import { capturingLogger, TEST_ENCRYPTION_KEYS, TEST_JWT_SECRET } from './server.js';

/** A mail a service queued and whose transaction committed, as the job worker would hand it to SMTP. */
export interface CapturedMail extends MailMessage {
  /** The tenant the mail went out for. */
  tenantId: string;
}

/** What the file's job queue held: the mails (decrypted) and every other job (webhook deliveries, imports, …). */
export interface QueuedWork {
  mail: CapturedMail[];
  jobs: ClaimedJob[];
}

/** A workspace made for one test through TenantService.create, with its first Admin signed in. */
export interface ServiceTenant {
  tenant: Tenant;
  admin: User;
  /** The tokens of the Admin's first session. */
  tokens: IssuedTokens;
  /** The Admin as an audit actor. */
  actor: Actor;
}

/** The services of one test file, built without HTTP; fill in by `beforeAll`, read inside tests. */
export interface ServiceSuite {
  config: Config;
  orm: MikroORM;
  /** Every service of the instance, wired by `createServices` as `startServer` wires them. */
  services: AppServices;
  /** True on the embedded PGlite (one pooled connection, statements serialised). */
  embedded: boolean;
  /** The request metadata fixtures and tests pass (`203.0.113.7`, `vitest`). */
  meta: RequestMeta;
  /** Every JSON log line the services wrote. */
  logs: string[];
  /** A fresh entity manager (a fork of the ORM's), as each request gets one. */
  em(): EntityManager;
  /**
   * The scope of one request of `tenant` by `actor` (the `system` actor when omitted, what a flow
   * before a credential may take): a fresh entity manager and {@link meta}, as the pipeline builds `ctx.scope`.
   */
  scope(tenant: Tenant, actor?: Actor): RequestScope;
  /**
   * Takes everything queued on this file's own job queue (`JOB_QUEUE`, unique per file, worked by no
   * worker), in the order they were queued: the mails decrypted with the keyring, the other jobs as claimed. Taken jobs are deleted,
   * so a later call returns only what was queued since. Only committed rows are seen: a mail queued in
   * a transaction that rolled back is not there.
   */
  takeQueued(): Promise<QueuedWork>;
  /** A new workspace (unique slug) with its first Admin, through TenantService.create. */
  createTenant(): Promise<ServiceTenant>;
  /**
   * A new user of the workspace through UserAdministrationService.create (password {@link PASSWORD},
   * address verified), then given `status` through the user query module (`Pending` cannot be set
   * by an admin).
   */
  addUser(tenant: Tenant, options?: { role?: UserRole; status?: User['status']; email?: string; password?: string }): Promise<User>;
  /** The tenant's audit events of `action`, newest first (the audit query module). */
  auditOf(tenantId: string, action: AuditAction): Promise<AuditItem[]>;
}

/**
 * Builds the real services of one instance for the calling test file, without HTTP (issue 33, "tests
 * below HTTP"): the configuration of a test server (`loadConfig`, the same fixed secrets), MikroORM
 * on this run's database (global-setup.ts: a fresh database on `TEST_DATABASE_URL`, else the embedded
 * PGlite, one pooled connection as the test server uses it; migrations applied by `openDatabase`),
 * and `createServices`. Its job queue is the file's own and no worker runs it, so the mailer's queued
 * messages stay for {@link ServiceSuite.takeQueued} to read (the capturing mailer). Rate limits are
 * in memory unless `env.REDIS_URL` is given. Closed (Redis, mail transport, ORM) after the file.
 */
export function useServices(env: Record<string, string | undefined> = {}): ServiceSuite {
  const suite = {} as ServiceSuite;
  let dataDir: string | undefined;
  beforeAll(async () => {
    const embedded = inject('embeddedDatabase');
    dataDir = mkdtempSync(path.join(tmpdir(), 'idp-svc-'));
    const config = loadConfig({
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: inject('databaseUrl'),
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      RATE_LIMIT_SCALE: '1000',
      LOG_LEVEL: 'debug',
      JOB_QUEUE: `svc-${randomBytes(6).toString('hex')}`,
      DATABASE_POOL_MAX: embedded ? '1' : '10',
      ...env,
    });
    const { logger, logs } = capturingLogger(config.logLevel);
    const orm = await openDatabase(config.databaseUrl!, config.databasePoolMax, logger);
    const services = createServices(config, logger, orm);
    const meta: RequestMeta = { ip: '203.0.113.7', userAgent: 'vitest' };
    const em = () => orm.em.fork() as EntityManager;
    const scope = (tenant: Tenant, actor: Actor = SYSTEM_ACTOR): RequestScope => ({ em: em(), tenant, actor, meta });
    Object.assign(suite, {
      config, orm, services, embedded, meta, logs, em, scope,
      async takeQueued(): Promise<QueuedWork> {
        const taken: QueuedWork = { mail: [], jobs: [] };
        const workerId = `svc-test-${unique()}`;
        for (;;) {
          // one at a time: the queue hands out the oldest first, so they come in the order queued
          const claimed = await services.jobs.claim(workerId, 1);
          if (claimed.length === 0) return taken;
          for (const job of claimed) {
            if (job.kind === 'mail.send') {
              const sealed = (job.payload as { sealed: string }).sealed;
              taken.mail.push(JSON.parse(services.keyring.decrypt(sealed, queuedMailAad(job.id))) as CapturedMail);
            } else {
              taken.jobs.push(job);
            }
            await services.jobs.complete(job, workerId);
          }
        }
      },
      async createTenant(): Promise<ServiceTenant> {
        const name = `Svc ${unique()}`;
        const created = await services.tenants.create(em(), { name, email: `admin-${unique()}@example.com`, password: PASSWORD }, meta);
        return { ...created, admin: created.user, actor: userActor(created.user.id) };
      },
      async addUser(tenant: Tenant, options: { role?: UserRole; status?: User['status']; email?: string; password?: string } = {}): Promise<User> {
        const live = (await findLiveTenantBySlug(em(), tenant.slug))!;
        const user = await services.userAdministration.create(scope(live), {
          email: options.email ?? `user-${unique()}@example.com`, role: options.role, password: options.password ?? PASSWORD, emailVerified: true,
        });
        if (options.status && options.status !== user.status) {
          await updateRoleAndStatus(em(), tenant.id, user.id, user.role, options.status, new Date());
        }
        return (await findLiveUserById(em(), tenant.id, user.id))!;
      },
      async auditOf(tenantId: string, action: AuditAction): Promise<AuditItem[]> {
        return services.auditLog.list(em(), tenantId, { action, limit: 200 });
      },
    } satisfies ServiceSuite);
  });
  afterAll(async () => {
    if (suite.services) {
      for (const dispose of suite.services.disposers) await dispose().catch(() => undefined);
    }
    await suite.orm?.close(true);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return suite;
}
