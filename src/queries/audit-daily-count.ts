import type { EntityManager } from '@mikro-orm/postgresql';
import { COUNTED_AUDIT_ACTIONS, type CountedAuditAction } from '../entities/audit-daily-count.js';

/**
 * The queries of the `audit_daily_count` table (docs/audit.md "Activity"): the kept counts of closed
 * UTC days, written from `audit_event` the first time a chart needs a day, and read back together
 * with the open days' live counts. Each function takes the caller's entity manager; every statement
 * is scoped by tenant id. Days are `YYYY-MM-DD` (UTC).
 */

/** One day's count of one counted action. */
export interface DayCountRow {
  day: string;
  action: CountedAuditAction;
  count: number;
}

/** How many days from `first` to `last` (inclusive) have no kept counts yet for the tenant. */
export async function countDaysWithoutCounts(em: EntityManager, tenantId: string, first: string, last: string): Promise<number> {
  const [row] = (await em.execute(
    `select count(*)::int as n from generate_series(?::date::timestamp, ?::date::timestamp, interval '1 day') d(day)
      where not exists (select 1 from audit_daily_count c where c.tenant_id = ? and c.day = d.day)`,
    [first, last, tenantId],
  )) as { n: number }[];
  return row?.n ?? 0;
}

/**
 * Keeps the counts of every counted action (zeros included) for each day from `first` to `last`
 * that has none yet, counted from the tenant's `audit_event` rows of that UTC day. A concurrent
 * identical write does nothing (`on conflict do nothing`).
 */
export async function keepDailyCounts(em: EntityManager, tenantId: string, first: string, last: string): Promise<void> {
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
    [tenantId, tenantId, first, last, [...COUNTED_AUDIT_ACTIONS], tenantId],
  );
}

/**
 * The kept counts of `actions` from `first` to `closedThrough`, and the live counts of the tenant's
 * events from `openFrom` on (the open days, on the tenant/action/time index), in one statement.
 */
export async function findDailyCounts(
  em: EntityManager,
  tenantId: string,
  first: string,
  closedThrough: string,
  openFrom: Date,
  actions: CountedAuditAction[],
): Promise<DayCountRow[]> {
  return (await em.execute(
    `select to_char(day, 'YYYY-MM-DD') as day, action, count from audit_daily_count
      where tenant_id = ? and day >= ?::date and day <= ?::date and action in (?)
     union all
     select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, action, count(*)::int as count
       from audit_event
      where tenant_id = ? and action in (?) and created_at >= ?
      group by 1, 2`,
    [tenantId, first, closedThrough, actions, tenantId, actions, openFrom],
  )) as DayCountRow[];
}
