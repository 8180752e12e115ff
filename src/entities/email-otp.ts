import { EntitySchema } from '@mikro-orm/core';

/**
 * The open email one-time code of a user (docs/mfa.md): at most one per user, a new request
 * replaces it. Only an HMAC-SHA256 of the code is stored; the row is deleted when the code is used.
 */
export interface EmailOtp {
  userId: string;
  tenantId: string;
  /** Lower-case hex HMAC-SHA256 of the code (see EmailOtpService), 64 characters. */
  codeHash: string;
  /** Codes tried so far, right or wrong; the code is dead at the limit (5). */
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
}

export const EmailOtpSchema = new EntitySchema<EmailOtp>({
  name: 'EmailOtp',
  tableName: 'email_otp',
  properties: {
    userId: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    codeHash: { type: 'string', length: 64 },
    attempts: { type: 'integer' },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
  },
});
