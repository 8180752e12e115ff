import { EntitySchema } from '@mikro-orm/core';

/** What a passkey ceremony is for. */
export type WebauthnPurpose = 'registration' | 'authentication';

/** An open passkey ceremony (docs/passkeys.md): single use, short-lived, stored as the SHA-256 hash of the challenge. */
export interface WebauthnChallenge {
  id: string;
  tenantId: string;
  /** The user the ceremony is for; null for a discoverable-credential sign-in. */
  userId: string | null;
  purpose: WebauthnPurpose;
  /** Only that user's credential may answer it. */
  userBound: boolean;
  challengeHash: string;
  createdAt: Date;
  expiresAt: Date;
}

export const WebauthnChallengeSchema = new EntitySchema<WebauthnChallenge>({
  name: 'WebauthnChallenge',
  tableName: 'webauthn_challenge',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid', nullable: true },
    purpose: { type: 'string', length: 16 },
    userBound: { type: 'boolean' },
    challengeHash: { type: 'string', length: 64 },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
  },
});
