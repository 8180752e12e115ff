import { EntitySchema } from '@mikro-orm/core';

/**
 * The answer of an invite created (POST invites) or resent with an `Idempotency-Key` (docs/api-rules.md
 * "Users and sign-up"), kept encrypted for 24 hours so a retry gets the same invite and token instead
 * of a second invite.
 */
export interface InviteAnswer {
  /** SHA-256 (hex) of the tenant, the caller and the key. */
  keyHash: string;
  tenantId: string;
  /** The invite the answer created. */
  inviteId: string;
  /** SHA-256 (hex) of the request as it took effect (for a resend: of the invite it resent); a retry must match it. */
  requestHash: string;
  /** Keyring ciphertext of the answer. */
  answer: string;
  createdAt: Date;
  expiresAt: Date;
}

export const InviteAnswerSchema = new EntitySchema<InviteAnswer>({
  name: 'InviteAnswer',
  tableName: 'invite_answer',
  properties: {
    keyHash: { type: 'string', length: 64, primary: true },
    tenantId: { type: 'uuid' },
    inviteId: { type: 'uuid' },
    requestHash: { type: 'string', length: 64 },
    answer: { type: 'text' },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
  },
});
