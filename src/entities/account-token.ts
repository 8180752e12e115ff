import { EntitySchema } from '@mikro-orm/core';

export const ACCOUNT_TOKEN_PURPOSES = ['email_verification', 'password_reset', 'email_change'] as const;
/** What a mailed single-use token proves or allows. */
export type AccountTokenPurpose = (typeof ACCOUNT_TOKEN_PURPOSES)[number];

/**
 * A single-use token mailed to a user (email verification, password reset, email change). Only the
 * SHA-256 hash (hex) of the token is stored; `consumedAt` is set when it is used, after which it is
 * worthless.
 */
export interface AccountToken {
  id: string;
  tenantId: string;
  userId: string;
  purpose: AccountTokenPurpose;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
  /** The address an `email_change` token confirms (lower-cased); null for the other purposes. */
  newEmail: string | null;
}

export const AccountTokenSchema = new EntitySchema<AccountToken>({
  name: 'AccountToken',
  tableName: 'account_token',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid' },
    purpose: { type: 'string', length: 32 },
    tokenHash: { type: 'string', length: 64, unique: true },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
    consumedAt: { type: 'Date', nullable: true },
    newEmail: { type: 'string', length: 254, nullable: true },
  },
});
