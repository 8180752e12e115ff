import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { scrubAuditEventsOfUser } from '../../queries/audit-event.js';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { systemScope, withEm, type RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import type { QueuedPersonalData } from '../mail/queued-personal-data.js';
import { deleteInvitesOfErasedUser } from '../../queries/invite.js';
import { revokeLiveSessionsOfTenant } from '../../queries/session.js';
import { hardDeleteTenant, lockExpiredDeletedTenantIds, markTenantDeleted } from '../../queries/tenant.js';
import { hardDeleteUser, lockExpiredDeletedUsers, type ExpiredUser } from '../../queries/user.js';

/** Users (and tenants) erased per transaction by one sweep step. */
export const ERASURE_BATCH_SIZE = 100;

/** What one sweep erased. */
export interface SweepResult {
  /** Ids of the users hard-deleted by this sweep (not by a concurrent one). */
  userIds: string[];
  /** Ids of the tenants hard-deleted by this sweep. */
  tenantIds: string[];
}

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

/**
 * Deletion and erasure (GDPR art. 17): soft deletion of a tenant, and the scheduled sweep that
 * hard-deletes users and tenants soft-deleted more than `USER_RETENTION_DAYS` days ago.
 * A tenant's deletion takes the request scope and audits with its actor; the sweep runs without a
 * request and audits through systemScope.
 */
export class ErasureService {
  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly audit: AuditService,
    private readonly queuedPersonalData: QueuedPersonalData,
  ) {}

  /**
   * Soft-deletes a tenant (DELETE tenant): `deletedAt` is set, so every route of its slug answers
   * 404 from now on and no one can sign in; every live session ends. The data (and the slug) stay
   * until the erasure sweep, `USER_RETENTION_DAYS` later. Audits `TenantSoftDeleted` and
   * `GdprErasureRequested`, by the scope's actor.
   * @returns how many sessions were ended.
   */
  async softDeleteTenant(scope: RequestScope): Promise<number> {
    const { tenant } = scope;
    return scope.em.transactional(async (tx) => {
      const inTx = withEm(scope, tx);
      const now = new Date();
      await markTenantDeleted(tx, tenant.id, now);
      const ended = await revokeLiveSessionsOfTenant(tx, tenant.id, now);
      const target = { type: 'tenant', id: tenant.id };
      await this.audit.record(inTx, { action: 'TenantSoftDeleted', target, details: { slug: tenant.slug, sessionsEnded: ended.length } });
      await this.audit.record(inTx, { action: 'GdprErasureRequested', target, details: { erasureAfter: this.erasureDate(now).toISOString() } });
      return ended.length;
    });
  }

  /** When something soft-deleted at `deletedAt` becomes due for erasure. */
  erasureDate(deletedAt: Date): Date {
    return new Date(deletedAt.getTime() + this.config.userRetentionDays * DAY_MS);
  }

  /**
   * Hard-deletes every user and tenant soft-deleted before `now - USER_RETENTION_DAYS`. Safe with
   * several instances sweeping at once: rows are claimed with `FOR UPDATE SKIP LOCKED` in batches of
   * {@link ERASURE_BATCH_SIZE}, so each is erased by exactly one sweep and none waits on another.
   *
   * For each user: the personal data in the tenant's audit rows about them is scrubbed (their email
   * wherever it is a top-level `details` value, the earlier and asked-for addresses of their email
   * changes; IP and user agent of rows they or the system performed), invites they accepted or that were closed for their address are deleted, so are
   * the jobs still queued for their address (mails, account-mail requests), the row is
   * deleted (sessions, refresh tokens, mailed tokens and IdP links go with it), and
   * `UserHardDeleted` plus `GdprErasureCompleted` are audited with the user id only. A tenant is
   * deleted with everything it holds, audit log and queued jobs included; that is logged, not audited.
   * @param now the reference time (tests pass a later one).
   */
  async sweepExpired(em: EntityManager, now: Date = new Date()): Promise<SweepResult> {
    const cutoff = new Date(now.getTime() - this.config.userRetentionDays * DAY_MS);
    const result: SweepResult = { userIds: [], tenantIds: [] };
    for (;;) {
      const erased = await em.transactional((tx) => this.eraseUserBatch(tx, cutoff));
      result.userIds.push(...erased);
      if (erased.length < ERASURE_BATCH_SIZE) break;
    }
    for (;;) {
      const erased = await em.transactional((tx) => this.eraseTenantBatch(tx, cutoff));
      result.tenantIds.push(...erased);
      if (erased.length < ERASURE_BATCH_SIZE) break;
    }
    if (result.userIds.length || result.tenantIds.length) {
      this.logger.info({ users: result.userIds.length, tenants: result.tenantIds, cutoff }, 'erasure sweep erased expired data');
    }
    return result;
  }

  private async eraseUserBatch(tx: EntityManager, cutoff: Date): Promise<string[]> {
    const users = await lockExpiredDeletedUsers(tx, cutoff, ERASURE_BATCH_SIZE);
    for (const user of users) {
      const scrubbed = await this.scrubAuditRows(tx, user);
      // The invite the user accepted, and closed invites to their address, hold their email.
      await deleteInvitesOfErasedUser(tx, user.tenantId, user.id, user.email);
      await this.queuedPersonalData.discard(tx, user.tenantId, user.email);
      await hardDeleteUser(tx, user.tenantId, user.id);
      const target = { type: 'user', id: user.id };
      const deletedAt = new Date(user.deletedAt).toISOString();
      const sweep = systemScope(tx, user.tenantId);
      await this.audit.record(sweep, { action: 'UserHardDeleted', target, details: { deletedAt } });
      await this.audit.record(sweep, {
        action: 'GdprErasureCompleted', target, details: { auditEventsScrubbed: scrubbed, retentionDays: this.config.userRetentionDays },
      });
    }
    return users.map((u) => u.id);
  }

  /**
   * Removes an erased user's personal data from the audit rows of their tenant. Ids stay: without
   * the user row they point at no one, and the log keeps its shape. Besides the current address, the
   * user's earlier addresses (the `previousEmail` of their `UserEmailChanged` rows) are removed from
   * the rows about them, and so are the `previousEmail` / `newEmail` keys of their email changes.
   * @returns how many rows were changed.
   */
  private async scrubAuditRows(tx: EntityManager, user: ExpiredUser): Promise<number> {
    return scrubAuditEventsOfUser(tx, user.tenantId, user.id, user.email);
  }

  private async eraseTenantBatch(tx: EntityManager, cutoff: Date): Promise<string[]> {
    const tenantIds = await lockExpiredDeletedTenantIds(tx, cutoff, ERASURE_BATCH_SIZE);
    for (const tenantId of tenantIds) {
      await this.queuedPersonalData.discardTenant(tx, tenantId);
      await hardDeleteTenant(tx, tenantId);
    }
    return tenantIds;
  }
}

/**
 * Runs {@link ErasureService.sweepExpired} every `intervalSeconds` seconds on a fresh entity
 * manager, one run at a time per instance (instances coordinate through row locks). The first run
 * comes after a random part of the interval, so instances started together do not sweep together
 * and an instance restarted more often than the interval still sweeps now and then. The timer is
 * unref'd so it never keeps the process alive; failures are logged and retried at the next run.
 * @returns a stopper that clears the timer and waits for a running sweep (for `services.disposers`).
 */
export function scheduleErasureSweep(
  erasure: ErasureService,
  forkEntityManager: () => EntityManager,
  intervalSeconds: number,
  logger: Logger,
): () => Promise<void> {
  if (intervalSeconds <= 0) return async () => undefined;
  const intervalMs = intervalSeconds * 1000;
  let stopped = false;
  let running: Promise<void> | undefined;
  const arm = (delayMs: number): NodeJS.Timeout => setTimeout(tick, delayMs).unref();
  function tick(): void {
    running = erasure
      .sweepExpired(forkEntityManager())
      .then(
        () => undefined,
        (err: unknown) => logger.error({ err }, 'erasure sweep failed'),
      )
      .finally(() => {
        running = undefined;
        if (!stopped) timer = arm(intervalMs);
      });
  }
  let timer = arm(randomInt(intervalMs));
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
