import type { EntityManager } from '@mikro-orm/postgresql';

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
 * Aggregates for the console's activity page: each chart is one statement, the daily series on the
 * audit table's tenant/action/time index, the user figures on the user table (the state now, not
 * events). Days are UTC.
 */
export class ActivityService {
  /** @param now the end of the window (tests pass a fixed time). */
  async summary(em: EntityManager, tenantId: string, now: Date = new Date()): Promise<ActivitySummary> {
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const start = new Date(today - (ACTIVITY_DAYS - 1) * DAY_MS);
    const days = Array.from({ length: ACTIVITY_DAYS }, (_, i) => new Date(start.getTime() + i * DAY_MS).toISOString().slice(0, 10));

    const signInRows = (await em.execute(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day,
              count(*) filter (where action = 'UserLogin')::int as ok,
              count(*) filter (where action = 'UserLoginFailed')::int as failed
         from audit_event
        where tenant_id = ? and action in ('UserLogin', 'UserLoginFailed') and created_at >= ?
        group by 1`,
      [tenantId, start],
    )) as { day: string; ok: number; failed: number }[];
    const signUpRows = (await em.execute(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n
         from audit_event
        where tenant_id = ? and action = 'UserSignup' and created_at >= ?
        group by 1`,
      [tenantId, start],
    )) as { day: string; n: number }[];
    const [active] = (await em.execute(
      `select count(*) filter (where last_login_at >= ?)::int as last7, count(*) filter (where last_login_at >= ?)::int as last30
         from app_user
        where tenant_id = ? and deleted_at is null and last_login_at >= ?`,
      [new Date(now.getTime() - 7 * DAY_MS), new Date(now.getTime() - 30 * DAY_MS), tenantId, new Date(now.getTime() - 30 * DAY_MS)],
    )) as { last7: number; last30: number }[];
    const [factors] = (await em.execute(
      `select count(*)::int as users,
              count(*) filter (where u.totp_enrolled_at is not null)::int as totp,
              count(*) filter (where p.user_id is not null)::int as passkey,
              count(*) filter (where u.totp_enrolled_at is not null or p.user_id is not null)::int as any_factor
         from app_user u
         left join (select distinct user_id from passkey where tenant_id = ?) p on p.user_id = u.id
        where u.tenant_id = ? and u.deleted_at is null and u.status <> 'Pending'`,
      [tenantId, tenantId],
    )) as { users: number; totp: number; passkey: number; any_factor: number }[];

    const byDay = <T>(rows: T[], key: (row: T) => string, value: (row: T) => number) => {
      const map = new Map(rows.map((row) => [key(row), value(row)]));
      return days.map((date) => ({ date, count: map.get(date) ?? 0 }));
    };
    return {
      from: days[0]!,
      to: days[days.length - 1]!,
      signIns: byDay(signInRows, (r) => r.day, (r) => r.ok),
      failedSignIns: byDay(signInRows, (r) => r.day, (r) => r.failed),
      signUps: byDay(signUpRows, (r) => r.day, (r) => r.n),
      activeUsers: { last7Days: active?.last7 ?? 0, last30Days: active?.last30 ?? 0 },
      mfaAdoption: { users: factors?.users ?? 0, totp: factors?.totp ?? 0, passkey: factors?.passkey ?? 0, anyFactor: factors?.any_factor ?? 0 },
    };
  }
}
