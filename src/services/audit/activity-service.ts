import type { EntityManager } from '@mikro-orm/postgresql';
import { COUNTED_AUDIT_ACTIONS, type CountedAuditAction } from '../../entities/audit-daily-count.js';

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
    const rows = await this.countsPerDay(em, tenantId, window, ['UserLogin', 'UserLoginFailed']);
    return {
      signIns: byDay(window, rows.filter((r) => r.action === 'UserLogin')),
      failedSignIns: byDay(window, rows.filter((r) => r.action === 'UserLoginFailed')),
    };
  }

  /** Chart 2: `UserSignup` per UTC day of the window, as {@link signInsPerDay}. */
  async signUpsPerDay(em: EntityManager, tenantId: string, window: ActivityWindow): Promise<DailyCount[]> {
    await this.closeDays(em, tenantId, window);
    return byDay(window, await this.countsPerDay(em, tenantId, window, ['UserSignup']));
  }

  /**
   * Writes the daily counts of the window's closed days that have none yet (one statement, only
   * when such a day exists: once per tenant and day). Two instances doing it at once write the same
   * numbers; the second insert does nothing.
   */
  private async closeDays(em: EntityManager, tenantId: string, window: ActivityWindow): Promise<void> {
    if (window.closedThrough < window.days[0]!) return;
    const [missing] = (await em.execute(
      `select count(*)::int as n from generate_series(?::date::timestamp, ?::date::timestamp, interval '1 day') d(day)
        where not exists (select 1 from audit_daily_count c where c.tenant_id = ? and c.day = d.day)`,
      [window.days[0], window.closedThrough, tenantId],
    )) as { n: number }[];
    if (!missing || missing.n === 0) return;
    await em.execute(
      `insert into audit_daily_count (tenant_id, day, action, count)
       select ?, d.day, a.action,
              (select count(*) from audit_event e
                where e.tenant_id = ? and e.action = a.action
                  and e.created_at >= d.day at time zone 'UTC'
                  and e.created_at < (d.day + interval '1 day') at time zone 'UTC')
         from generate_series(?::date::timestamp, ?::date::timestamp, interval '1 day') as d(day)
        cross join unnest(array[?]::text[]) as a(action)
        where not exists (select 1 from audit_daily_count c where c.tenant_id = ? and c.day = d.day::date)
       on conflict do nothing`,
      [tenantId, tenantId, window.days[0], window.closedThrough, [...COUNTED_AUDIT_ACTIONS], tenantId],
    );
  }

  /** The counts of the closed days and the live counts of the open days, for some counted actions. */
  private async countsPerDay(em: EntityManager, tenantId: string, window: ActivityWindow, actions: CountedAuditAction[]): Promise<DayCountRow[]> {
    const rows = (await em.execute(
      `select to_char(day, 'YYYY-MM-DD') as day, action, count from audit_daily_count
        where tenant_id = ? and day >= ?::date and day <= ?::date and action in (?)
       union all
       select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, action, count(*)::int as count
         from audit_event
        where tenant_id = ? and action in (?) and created_at >= ?
        group by 1, 2`,
      [tenantId, window.days[0], window.closedThrough, actions, tenantId, actions, window.openFrom],
    )) as DayCountRow[];
    return rows;
  }

  /** Figure 3, one statement: live users whose last sign-in is at most 7 and 30 days before `now`. */
  async activeUsers(em: EntityManager, tenantId: string, now: Date): Promise<ActivitySummary['activeUsers']> {
    const weekAgo = new Date(now.getTime() - 7 * DAY_MS);
    const monthAgo = new Date(now.getTime() - 30 * DAY_MS);
    const [row] = (await em.execute(
      `select count(*) filter (where last_login_at >= ?)::int as last7, count(*)::int as last30
         from app_user
        where tenant_id = ? and deleted_at is null and last_login_at >= ?`,
      [weekAgo, tenantId, monthAgo],
    )) as { last7: number; last30: number }[];
    return { last7Days: row?.last7 ?? 0, last30Days: row?.last30 ?? 0 };
  }

  /** Figure 4, one statement: live users who are not Pending, and how many have TOTP, a passkey, either. */
  async mfaAdoption(em: EntityManager, tenantId: string): Promise<ActivitySummary['mfaAdoption']> {
    const [row] = (await em.execute(
      `select count(*)::int as users,
              count(*) filter (where u.totp_enrolled_at is not null)::int as totp,
              count(*) filter (where p.user_id is not null)::int as passkey,
              count(*) filter (where u.totp_enrolled_at is not null or p.user_id is not null)::int as any_factor
         from app_user u
         left join (select distinct user_id from passkey where tenant_id = ?) p on p.user_id = u.id
        where u.tenant_id = ? and u.deleted_at is null and u.status <> 'Pending'`,
      [tenantId, tenantId],
    )) as { users: number; totp: number; passkey: number; any_factor: number }[];
    return { users: row?.users ?? 0, totp: row?.totp ?? 0, passkey: row?.passkey ?? 0, anyFactor: row?.any_factor ?? 0 };
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

interface DayCountRow {
  day: string;
  action: CountedAuditAction;
  count: number;
}

/** Every day of the window with its count (0 when no row). */
function byDay(window: ActivityWindow, rows: DayCountRow[]): DailyCount[] {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.day, (counts.get(row.day) ?? 0) + Number(row.count));
  return window.days.map((date) => ({ date, count: counts.get(date) ?? 0 }));
}
