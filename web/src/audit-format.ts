import { formatDateTime } from './i18n';

export { AUDIT_ACTION_GROUPS, AUDIT_ACTIONS_BY_GROUP, isAuditAction, type AuditAction, type AuditActionGroup } from './audit-actions.js';

/** A timestamp in the page language and the reader's time zone, or a dash when there is none. */
export const when = (iso: string | null | undefined): string => (iso ? formatDateTime(iso) : '—');

/** `sessionsEnded` → "sessions ended". */
export function humanKey(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/_/g, ' ').toLowerCase();
}

/** One `details` value as text: lists joined with commas, objects as JSON, ISO timestamps in the page language. */
function detailText(value: unknown): string {
  const text = Array.isArray(value) ? value.join(', ') : value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /^\d{4}-\d{2}-\d{2}T/.test(text) ? when(text) : text;
}

/**
 * An audit event's details as key/value pairs a person reads, in the order the event holds them:
 * `{sessionsEnded: 2, at: '2026-11-24T14:05:00Z'}` → `[['sessions ended', '2'], ['at', 'Nov 24, 2026, 2:05 PM']]`.
 */
export function detailEntries(details: Record<string, unknown>): Array<[key: string, value: string]> {
  return Object.entries(details).map(([key, value]) => [humanKey(key), detailText(value)]);
}

/** An audit event's details as text a person reads: "email: a@b.c · from: Member · to: Admin". */
export function formatDetails(details: Record<string, unknown>): string {
  const entries = detailEntries(details);
  if (entries.length === 0) return '—';
  return entries.map(([key, value]) => `${key}: ${value}`).join(' · ');
}

/**
 * What an event itself says about a user the console cannot find any more (deleted): the `details.email`
 * of an event that targets that user (`UserSoftDeleted` records the address), else undefined.
 */
export function emailInEvent(event: { targetType: string | null; targetId: string | null; details: Record<string, unknown> }, userId: string): string | undefined {
  const email = event.details.email;
  return event.targetType === 'user' && event.targetId === userId && typeof email === 'string' && email.includes('@') ? email : undefined;
}
