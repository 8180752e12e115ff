import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import { sha256Hex } from '../../src/security/tokens.js';
import { findApiKeyByHash } from '../../src/queries/api-key.js';
import type { Principal } from '../../src/services/sessions/bearer-authentication-service.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: an API key is stored as its SHA-256 and found by it (ApiKeyService.create,
 * BearerAuthenticationService.authenticate; docs/decisions.md "API keys").
 */

const suite = useServices();

function authenticate(tenant: Tenant, key: string): Promise<Principal> {
  return suite.services.credentials.authenticate(suite.em(), tenant, `Bearer ${key}`, undefined);
}

describe('API keys: the hash look-up', () => {
  it('stores only the hash and a prefix, and finds the key by the hash of the plaintext', async () => {
    const { tenant, actor } = await suite.createTenant();
    const { apiKey, plaintext } = await suite.services.apiKeys.create(suite.scope(tenant, actor), { name: 'ci', environment: 'test' });
    expect(plaintext).toMatch(/^ak_test_[0-9A-Za-z]{40}$/);
    const stored = await suite.services.apiKeys.list(suite.em(), tenant, false);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ id: apiKey.id, keyHash: sha256Hex(plaintext), prefix: plaintext.slice(0, 12) });
    expect(JSON.stringify(stored)).not.toContain(plaintext);
    expect(await findApiKeyByHash(suite.em(), sha256Hex(plaintext))).toMatchObject({ id: apiKey.id, tenantId: tenant.id });
    expect(await authenticate(tenant, plaintext)).toEqual({ kind: 'api_key', tenantId: tenant.id, apiKeyId: apiKey.id, environment: 'test' });
    const created = await suite.auditOf(tenant.id, 'ApiKeyCreated');
    expect(created[0]?.details).toMatchObject({ name: 'ci', environment: 'test', prefix: apiKey.prefix });
    expect(JSON.stringify(created)).not.toContain(plaintext);
  });

  it('refuses a key that differs by one character, another workspace\'s key, and a revoked key', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    const { apiKey, plaintext } = await suite.services.apiKeys.create(suite.scope(first.tenant, first.actor), { name: 'live', environment: 'live' });
    const altered = `${plaintext.slice(0, -1)}${plaintext.endsWith('a') ? 'b' : 'a'}`;
    await expect(authenticate(first.tenant, altered)).rejects.toMatchObject({ details: { reason: 'invalid_token' } });
    await expect(authenticate(second.tenant, plaintext)).rejects.toMatchObject({ details: { reason: 'tenant_mismatch' } });
    await suite.services.apiKeys.revoke(suite.scope(first.tenant, first.actor), apiKey.id);
    await expect(authenticate(first.tenant, plaintext)).rejects.toMatchObject({ details: { reason: 'api_key_revoked' } });
    expect(await suite.services.apiKeys.list(suite.em(), first.tenant, false)).toEqual([]);
  });

  it('refuses a key past its expiry (api_key_expired), and an expiry in the past at creation', async () => {
    const { tenant, actor } = await suite.createTenant();
    await expect(suite.services.apiKeys.create(suite.scope(tenant, actor), { name: 'old', environment: 'live', expiresAt: new Date(Date.now() - 1000) }))
      .rejects.toMatchObject({ details: { reason: 'expires_at_in_past' } });
    const { plaintext } = await suite.services.apiKeys.create(suite.scope(tenant, actor), { name: 'brief', environment: 'live', expiresAt: new Date(Date.now() + 800) });
    await expect(authenticate(tenant, plaintext)).resolves.toMatchObject({ kind: 'api_key' });
    await new Promise((resolve) => setTimeout(resolve, 900));
    await expect(authenticate(tenant, plaintext)).rejects.toMatchObject({ details: { reason: 'api_key_expired' } });
  });
});
