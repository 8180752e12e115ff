import type { Locale } from './locales.js';

/** Where a request came from, recorded on sessions and audit events. */
export interface RequestMeta {
  /** Client IP: the socket address, or taken from `X-Forwarded-For` as `TRUST_PROXY` says. */
  ip: string | null;
  /** `User-Agent` header, cut to 512 characters. */
  userAgent: string | null;
  /** The language of `Accept-Language` the pages and mails speak, when it names one (lib/locales.ts). */
  locale?: Locale;
}

/** Who performed an audited operation (docs/audit.md: `actorType`, `actorId`). */
export interface Actor {
  type: 'user' | 'api_key' | 'system';
  id: string | null;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null };
