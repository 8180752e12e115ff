import { EntitySchema } from '@mikro-orm/core';

/**
 * The answer of a refresh sent with an `Idempotency-Key` (docs/api-rules.md "Credentials and
 * sessions"), kept encrypted for a minute so a retry gets the same pair.
 */
export interface RefreshAnswer {
  /** SHA-256 (hex) of the presented token's hash and the key. */
  keyHash: string;
  tenantId: string;
  sessionId: string;
  /** The refresh token the answer issued. */
  successorId: string;
  /** Keyring ciphertext of the answer. */
  answer: string;
  createdAt: Date;
  expiresAt: Date;
}

export const RefreshAnswerSchema = new EntitySchema<RefreshAnswer>({
  name: 'RefreshAnswer',
  tableName: 'refresh_answer',
  properties: {
    keyHash: { type: 'string', length: 64, primary: true },
    tenantId: { type: 'uuid' },
    sessionId: { type: 'uuid' },
    successorId: { type: 'uuid' },
    answer: { type: 'text' },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
  },
});
