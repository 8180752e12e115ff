import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiKey, ApiKeyEnvironment } from '../../entities/api-key.js';
import type { Tenant } from '../../entities/tenant.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import { isUuid } from '../../lib/uuid.js';
import { randomBase62, sha256Hex } from '../../security/tokens.js';
import type { AuditService } from '../audit/audit-service.js';
import { findApiKey, findApiKeysOfTenant, insertApiKey, revokeApiKey } from '../../queries/api-key.js';
import { API_KEY_ERRORS } from '../../errors/api-key.js';

/** Random base62 characters after `ak_live_` / `ak_test_`: 40 × log2(62) ≈ 238 bits. */
export const API_KEY_RANDOM_LENGTH = 40;
/** Characters of the plaintext kept visible as `prefix` (`ak_live_` plus four random ones). */
export const API_KEY_VISIBLE_PREFIX_LENGTH = 12;

/** What an admin gives to create a key (POST api-keys in the OpenAPI document). */
export interface CreateApiKeyInput {
  name: string;
  environment: ApiKeyEnvironment;
  expiresAt?: Date;
}

/**
 * The tenant's API keys (docs/api-rules.md "Resources", docs/decisions.md "API keys"): creation, listing, revocation.
 * Authentication with a key lives in BearerAuthenticationService.
 * Its changes take the request's scope first (RequestScope: the workspace, the actor, the metadata)
 * and are audited with it.
 */
export class ApiKeyService {
  constructor(private readonly audit: AuditService) {}

  /**
   * Creates a key `ak_<environment>_<40 base62>`; only its SHA-256 and a 12-character prefix are
   * stored. Audits `ApiKeyCreated` (name, environment, prefix; never the key).
   * @returns the stored key and the plaintext, which is never available again.
   * @throws ApiError 400 `expires_at_in_past` when `expiresAt` is not in the future.
   */
  async create(scope: RequestScope, input: CreateApiKeyInput): Promise<{ apiKey: ApiKey; plaintext: string }> {
    const { em, tenant } = scope;
    const now = new Date();
    if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
      throw API_KEY_ERRORS.expiresAtInPast();
    }
    const plaintext = `ak_${input.environment}_${randomBase62(API_KEY_RANDOM_LENGTH)}`;
    const apiKey: ApiKey = {
      id: randomUUID(),
      tenantId: tenant.id,
      name: input.name,
      environment: input.environment,
      prefix: plaintext.slice(0, API_KEY_VISIBLE_PREFIX_LENGTH),
      keyHash: sha256Hex(plaintext),
      createdAt: now,
      createdBy: scope.actor.id,
      expiresAt: input.expiresAt ?? null,
      lastUsedAt: null,
      revokedAt: null,
    };
    await em.transactional(async (tx) => {
      await insertApiKey(tx, apiKey);
      await this.audit.record(withEm(scope, tx), {
        action: 'ApiKeyCreated', target: { type: 'api_key', id: apiKey.id },
        details: {
          name: apiKey.name, environment: apiKey.environment, prefix: apiKey.prefix,
          expiresAt: apiKey.expiresAt ? apiKey.expiresAt.toISOString() : null,
        },
      });
    });
    return { apiKey, plaintext };
  }

  /** The tenant's keys, newest first; revoked ones only when `includeRevoked`. */
  list(em: EntityManager, tenant: Tenant, includeRevoked: boolean): Promise<ApiKey[]> {
    return findApiKeysOfTenant(em, tenant.id, includeRevoked);
  }

  /**
   * Revokes a key: from the next request on it gets 401 `api_key_revoked`. Audits `ApiKeyRevoked`.
   * Revoking an already revoked key changes nothing and answers the same.
   * @throws ApiError 404 when the tenant has no key with this id.
   */
  async revoke(scope: RequestScope, apiKeyId: string): Promise<void> {
    const { em, tenant } = scope;
    if (!isUuid(apiKeyId)) throw API_KEY_ERRORS.apiKeyNotFound();
    await em.transactional(async (tx) => {
      const apiKey = await findApiKey(tx, tenant.id, apiKeyId);
      if (!apiKey) throw API_KEY_ERRORS.apiKeyNotFound();
      if (!(await revokeApiKey(tx, tenant.id, apiKey.id, new Date()))) return;
      await this.audit.record(withEm(scope, tx), {
        action: 'ApiKeyRevoked', target: { type: 'api_key', id: apiKey.id },
        details: { name: apiKey.name, environment: apiKey.environment, prefix: apiKey.prefix },
      });
    });
  }
}
