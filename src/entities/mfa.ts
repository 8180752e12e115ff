import { EntitySchema } from '@mikro-orm/core';

/** How the first factor of a pending sign-in was proved: the external provider, or an enterprise SSO connection. */
export type FirstFactor = 'idp' | 'sso';

/**
 * The pending second step of a sign-in whose first factor involved no password (docs/mfa.md): a
 * short-lived, single-use token, stored only as its SHA-256 hash (hex).
 */
export interface MfaChallenge {
  id: string;
  tenantId: string;
  userId: string;
  tokenHash: string;
  firstFactor: FirstFactor;
  /** The provider issuer of an `idp` first step. */
  issuer: string | null;
  /** Codes tried so far. */
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
}

export const MfaChallengeSchema = new EntitySchema<MfaChallenge>({
  name: 'MfaChallenge',
  tableName: 'mfa_challenge',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid' },
    tokenHash: { type: 'string', length: 64, unique: 'mfa_challenge_token_hash_unique' },
    firstFactor: { type: 'string', length: 16 },
    issuer: { type: 'string', length: 2048, nullable: true },
    attempts: { type: 'integer' },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
    consumedAt: { type: 'Date', nullable: true },
  },
});

/** One single-use recovery code of a user (docs/mfa.md "Recovery codes"), stored as a keyed hash. */
export interface MfaRecoveryCode {
  id: string;
  tenantId: string;
  userId: string;
  codeHash: string;
  createdAt: Date;
  usedAt: Date | null;
}

export const MfaRecoveryCodeSchema = new EntitySchema<MfaRecoveryCode>({
  name: 'MfaRecoveryCode',
  tableName: 'mfa_recovery_code',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    userId: { type: 'uuid' },
    codeHash: { type: 'string', length: 64 },
    createdAt: { type: 'Date' },
    usedAt: { type: 'Date', nullable: true },
  },
});
