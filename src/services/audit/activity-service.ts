import type { EntityManager } from '@mikro-orm/postgresql';
import { countActiveUsers, countFactorAdoption } from '../../queries/user.js';
import { countDaysWithoutCounts, findDailyCounts, keepDailyCounts, type DayCountRow } from '../../queries/audit-daily-count.js';

/** How many days the activity charts cover, today (UTC) included (docs/audit.md "Activity"). */
export const ACTIVITY_DAYS = 30;

/** One UTC day of a chart: `date` as YYYY-MM-DD. */
export interface DailyCount {
  date: string;
  count: number;
}

/** The console's start page, one SQL aggregate per chart (docs/audit.md "Activity"). */
export interface ActivitySummary {
  /** First and last UTC day covered, YYYY-MM-DD. */
  from: string;
  to: string;
  /** Successful sign-ins (`UserLogin`) and failed ones (`UserLoginFailed`) per day, every day present. */
  signIns: DailyCount[];
  failedSignIns: DailyCount[];
  /** New accounts (`UserSignup`: sign-up, invite, provider, workspace creation) per day. */
  signUps: DailyCount[];
  /** Live users whose last sign-in is at most 7 and 30 days old. */
  activeUsers: { last7Days: number; last30Days: number };
  /** Of the live users who can sign in (not Pending): how many have each factor, and any factor. */
  mfaAdoption: { users: number; totp: number; passkey: number; anyFactor: number };
}

const DAY_MS = 86_400_000;

/**
 * Aggregates for the console's activity page (docs/audit.md "Activity"): each chart is one
 * statement. The daily series read the kept counts of closed days (`audit_daily_count`, written the
 * first time a chart needs a day) and count the open day's events on the tenant/action/time index;
 * the user figures count the user table (the state now, not events). Days are UTC.
 */
export class ActivityService {
  /** @param now the end of the window (tests pass a fixed time). */
  async summary(em: EntityManager, tenantId: string, now: Date = new Date()): Promise<ActivitySummary> {
    const window = activityWindow(now);
    const signIns = await this.signInsPerDay(em, tenantId, window);
    const signUps = await this.signUpsPerDay(em, tenantId, window);
    return {
      from: window.days[0]!,
      to: window.days[window.days.length - 1]!,
      signIns: signIns.signIns,
      failedSignIns: signIns.failedSignIns,
      signUps,
      activeUsers: await this.activeUsers(em, tenantId, now),
      mfaAdoption: await this.mfaAdoption(em, tenantId),
    };
  }

  /**
   * Chart 1: `UserLogin` and `UserLoginFailed` per UTC day of the window: one statement reading the
   * daily counts of the closed days and counting the events of the open ones.
   */
  async signInsPerDay(em: EntityManager, tenantId: string, window: ActivityWindow): Promise<{ signIns: DailyCount[]; failedSignIns: DailyCount[] }> {
    await this.closeDays(em, tenantId, window);
    const rows = await findDailyCounts(em, tenantId, window.days[0]!, window.closedThrough, window.openFrom, ['UserLogin', 'UserLoginFailed']);
    return {
      signIns: byDay(window, rows.filter((r) => r.action === 'UserLogin')),
      failedSignIns: byDay(window, rows.filter((r) => r.action === 'UserLoginFailed')),
    };
  }

  /** Chart 2: `UserSignup` per UTC day of the window, as {@link signInsPerDay}. */
  async signUpsPerDay(em: EntityManager, tenantId: string, window: ActivityWindow): Promise<DailyCount[]> {
    await this.closeDays(em, tenantId, window);
    return byDay(window, await findDailyCounts(em, tenantId, window.days[0]!, window.closedThrough, window.openFrom, ['UserSignup']));
  }

  /**
   * Writes the daily counts of the window's closed days that have none yet (one statement, only
   * when such a day exists: once per tenant and day). Two instances doing it at once write the same
   * numbers; the second insert does nothing.
   */
  private async closeDays(em: EntityManager, tenantId: string, window: ActivityWindow): Promise<void> {
    if (window.closedThrough < window.days[0]!) return;
    if ((await countDaysWithoutCounts(em, tenantId, window.days[0]!, window.closedThrough)) === 0) return;
    await keepDailyCounts(em, tenantId, window.days[0]!, window.closedThrough);
  }

  /** Figure 3, one statement: live users whose last sign-in is at most 7 and 30 days before `now`. */
  async activeUsers(em: EntityManager, tenantId: string, now: Date): Promise<ActivitySummary['activeUsers']> {
    return countActiveUsers(em, tenantId, new Date(now.getTime() - 7 * DAY_MS), new Date(now.getTime() - 30 * DAY_MS));
  }

  /** Figure 4, one statement: live users who are not Pending, and how many have TOTP, a passkey, either. */
  async mfaAdoption(em: EntityManager, tenantId: string): Promise<ActivitySummary['mfaAdoption']> {
    return countFactorAdoption(em, tenantId);
  }
}

/**
 * A day is closed, and its counts kept, once it ended at least this long ago: an instance whose
 * clock runs a little behind may still write an event stamped with the day before.
 */
export const CLOSED_DAY_GRACE_MS = 60 * 60 * 1000;

/** The UTC days of the charts: {@link ACTIVITY_DAYS} days ending with the day of `now`. */
export interface ActivityWindow {
  /** Every day, YYYY-MM-DD, oldest first. */
  days: string[];
  /** The last closed day (YYYY-MM-DD; before `days[0]` when none of the window is closed). */
  closedThrough: string;
  /** Midnight UTC after `closedThrough`: events from here on are counted live. */
  openFrom: Date;
}

/** The window of the charts for a given time. */
export function activityWindow(now: Date): ActivityWindow {
  const midnight = (t: number) => t - (t % DAY_MS);
  const today = midnight(now.getTime());
  const start = today - (ACTIVITY_DAYS - 1) * DAY_MS;
  const openFrom = midnight(now.getTime() - CLOSED_DAY_GRACE_MS);
  return {
    days: Array.from({ length: ACTIVITY_DAYS }, (_, i) => new Date(start + i * DAY_MS).toISOString().slice(0, 10)),
    closedThrough: new Date(openFrom - DAY_MS).toISOString().slice(0, 10),
    openFrom: new Date(openFrom),
  };
}

/** Every day of the window with its count (0 when no row). */
function byDay(window: ActivityWindow, rows: DayCountRow[]): DailyCount[] {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.day, (counts.get(row.day) ?? 0) + Number(row.count));
  return window.days.map((date) => ({ date, count: counts.get(date) ?? 0 }));
}
