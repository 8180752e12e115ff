import { EntitySchema } from '@mikro-orm/core';

export const API_KEY_ENVIRONMENTS = ['live', 'test'] as const;
export type ApiKeyEnvironment = (typeof API_KEY_ENVIRONMENTS)[number];

/** A tenant's server credential (docs/api-rules.md "Resources"), stored as a SHA-256 hash with a visible prefix. */
export interface ApiKey {
  id: string;
  tenantId: string;
  name: string;
  environment: ApiKeyEnvironment;
  /** First characters of the plaintext, e.g. `ak_live_AbCd`, shown in lists to recognise a key. */
  prefix: string;
  keyHash: string;
  createdAt: Date;
  createdBy: string | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export const ApiKeySchema = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    name: { type: 'string', length: 120 },
    environment: { type: 'string', length: 8 },
    prefix: { type: 'string', length: 32 },
    keyHash: { type: 'string', length: 64, unique: true },
    createdAt: { type: 'Date' },
    createdBy: { type: 'uuid', nullable: true },
    expiresAt: { type: 'Date', nullable: true },
    lastUsedAt: { type: 'Date', nullable: true },
    revokedAt: { type: 'Date', nullable: true },
  },
});
