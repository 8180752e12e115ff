import { formatDateTime } from './i18n';

/** A timestamp in the page language and the reader's time zone, or a dash when there is none. */
export const when = (iso: string | null | undefined): string => (iso ? formatDateTime(iso) : '—');

/** `sessionsEnded` → "sessions ended". */
export function humanKey(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/_/g, ' ').toLowerCase();
}

/** An audit event's details as text a person reads: "email: a@b.c · from: Member · to: Admin". */
export function formatDetails(details: Record<string, unknown>): string {
  if (Object.keys(details).length === 0) return '—';
  return Object.entries(details)
    .map(([key, value]) => {
      const text = Array.isArray(value) ? value.join(', ') : value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);
      return `${humanKey(key)}: ${/^\d{4}-\d{2}-\d{2}T/.test(text) ? when(text) : text}`;
    })
    .join(' · ');
}
