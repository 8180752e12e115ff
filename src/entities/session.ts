import { EntitySchema } from '@mikro-orm/core';

/**
 * One sign-in: the refresh-token family (docs/api-rules.md "Credentials and sessions"). Its id is the `sid` claim of every access
 * token issued in it; revoking it ends those access tokens at once.
 */
export interface Session {
  id: string;
  tenantId: string;
  userId: string;
  createdAt: Date;
  /**
   * When the session was last authenticated by a password, the provider or a second factor (its
   * start); refreshing does not renew it. Null for sessions older than the column.
   */
  authenticatedAt: Date | null;
  revokedAt: Date | null;
  /** Why the family ended: `logout`, `logout_all`, `refresh_token_reused`, `user_deleted`, … */
  revokedReason: string | null;
  ip: string | null;
  userAgent: string | null;
  /**
   * How the session was authenticated: `password`, `password+totp`, `password+recovery_code`,
   * `password+email_otp`, `idp`, `idp+totp`, … Null for sessions older than the column.
   */
  method: string | null;
}

export const SessionSchema = new EntitySchema<Session>({
  name: 'Session',
  tableName: 'session',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid' },
    createdAt: { type: 'Date' },
    authenticatedAt: { type: 'Date', nullable: true },
    revokedAt: { type: 'Date', nullable: true },
    revokedReason: { type: 'string', length: 32, nullable: true },
    ip: { type: 'string', length: 64, nullable: true },
    userAgent: { type: 'string', length: 512, nullable: true },
    method: { type: 'string', length: 32, nullable: true },
  },
});
