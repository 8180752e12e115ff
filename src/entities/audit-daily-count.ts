import { EntitySchema } from '@mikro-orm/core';

/** The audit actions whose daily counts the activity charts keep (docs/audit.md "Activity"). */
export const COUNTED_AUDIT_ACTIONS = ['UserLogin', 'UserLoginFailed', 'UserSignup'] as const;
export type CountedAuditAction = (typeof COUNTED_AUDIT_ACTIONS)[number];

/**
 * How many events of one counted action a tenant's audit log holds for one closed UTC day: written
 * once, the first time a chart needs that day, and never changed (events are only ever written with
 * the current time). A closed day has a row for every counted action, zero included.
 */
export interface AuditDailyCount {
  tenantId: string;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  action: CountedAuditAction;
  count: number;
}

export const AuditDailyCountSchema = new EntitySchema<AuditDailyCount>({
  name: 'AuditDailyCount',
  tableName: 'audit_daily_count',
  properties: {
    tenantId: { type: 'uuid', primary: true },
    day: { type: 'date', primary: true },
    action: { type: 'string', length: 40, primary: true },
    count: { type: 'integer' },
  },
});
