import { EntitySchema } from '@mikro-orm/core';

/** One opaque refresh token of a session family, stored only as its SHA-256 hash (hex). */
export interface RefreshToken {
  id: string;
  sessionId: string;
  tenantId: string;
  tokenHash: string;
  /** The token this one was issued in exchange for; null for the first of a family. */
  parentId: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** Set when the token was exchanged at auth/refresh; a second presentation is a replay. */
  rotatedAt: Date | null;
}

export const RefreshTokenSchema = new EntitySchema<RefreshToken>({
  name: 'RefreshToken',
  tableName: 'refresh_token',
  properties: {
    id: { type: 'uuid', primary: true },
    sessionId: { type: 'uuid' },
    tenantId: { type: 'uuid' },
    tokenHash: { type: 'string', length: 64, unique: true },
    parentId: { type: 'uuid', nullable: true },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
    rotatedAt: { type: 'Date', nullable: true },
  },
});
