import { describe, expect, it } from 'vitest';
import { createTenant, expectError, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();

async function createKey(tenant: TestTenant, body: Record<string, unknown> = { name: `key ${unique()}`, environment: 'live' }) {
  const res = await suite.api.post(`/v1/${tenant.slug}/api-keys`, body, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { plaintext: string; apiKey: Record<string, any> };
}

async function sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
  return (await suite.server.services.orm.em.fork().execute(text, params)) as T[];
}

describe('POST /v1/{tenantSlug}/api-keys', () => {
  it.each(['live', 'test'] as const)('creates an ak_%s_ key, returned once and stored only as a hash', async (environment) => {
    const tenant = await createTenant(suite.api);
    const { plaintext, apiKey } = await createKey(tenant, { name: 'Backend', environment });
    expect(plaintext).toMatch(new RegExp(`^ak_${environment}_[0-9A-Za-z]{32,}$`));
    expect(Object.keys(apiKey).sort()).toEqual(['createdAt', 'createdBy', 'environment', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt']);
    expect(apiKey).toMatchObject({ name: 'Backend', environment, expiresAt: null, lastUsedAt: null, revokedAt: null, createdBy: tenant.adminId });
    expect(plaintext.startsWith(apiKey.prefix)).toBe(true);
    expect(apiKey.prefix.length).toBeLessThan(plaintext.length - 30);

    const rows = await sql<Record<string, unknown>>('select * from api_key where id = ?', [apiKey.id]);
    expect(JSON.stringify(rows)).not.toContain(plaintext);
    expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);

    const listed = await suite.api.get(`/v1/${tenant.slug}/api-keys`, { token: tenant.accessToken });
    expect(listed.body.items).toEqual([apiKey]);
    expect(JSON.stringify(listed.body)).not.toContain(plaintext);
    expect(suite.server.logs.join('\n')).not.toContain(plaintext);

    const audit = await suite.api.get(`/v1/${tenant.slug}/audit?action=ApiKeyCreated`, { token: tenant.accessToken });
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({ actorType: 'user', actorId: tenant.adminId, targetType: 'api_key', targetId: apiKey.id });
    expect(JSON.stringify(audit.body)).not.toContain(plaintext);
  });

  it('keeps a future expiresAt and refuses a past one', async () => {
    const tenant = await createTenant(suite.api);
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const { apiKey } = await createKey(tenant, { name: 'short', environment: 'test', expiresAt });
    expect(apiKey.expiresAt).toBe(expiresAt);
    const past = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'old', environment: 'test', expiresAt: '2020-01-01T00:00:00Z' }, { token: tenant.accessToken });
    expectError(past, 400, 'BAD_REQUEST', 'expires_at_in_past');
  });

  it.each([
    ['missing name', { environment: 'live' }],
    ['empty name', { name: '', environment: 'live' }],
    ['name over 120', { name: 'n'.repeat(121), environment: 'live' }],
    ['unknown environment', { name: 'k', environment: 'prod' }],
    ['expiresAt not a date-time', { name: 'k', environment: 'live', expiresAt: 'tomorrow' }],
  ])('answers 400 for %s', async (_label, body) => {
    const tenant = await createTenant(suite.api);
    expectError(await suite.api.post(`/v1/${tenant.slug}/api-keys`, body, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });
});

describe('an API key as a credential', () => {
  it('acts for the tenant on admin routes and is refused on user-only routes', async () => {
    const tenant = await createTenant(suite.api);
    const { plaintext } = await createKey(tenant);
    const users = await suite.api.get(`/v1/${tenant.slug}/users`, { token: plaintext });
    expect(users.status).toBe(200);
    expect(users.body.items.map((u: any) => u.email)).toEqual([tenant.adminEmail]);
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`, { token: plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/logout-all`, {}, { token: plaintext }), 401, 'UNAUTHORIZED', 'user_token_required');
  });

  it('records lastUsedAt when used', async () => {
    const tenant = await createTenant(suite.api);
    const { plaintext, apiKey } = await createKey(tenant);
    expect((await suite.api.get(`/v1/${tenant.slug}/tenant`, { token: plaintext })).status).toBe(200);
    let lastUsedAt: string | null = null;
    for (let i = 0; i < 50 && !lastUsedAt; i++) {
      const listed = await suite.api.get(`/v1/${tenant.slug}/api-keys`, { token: tenant.accessToken });
      lastUsedAt = listed.body.items.find((k: any) => k.id === apiKey.id).lastUsedAt;
      if (!lastUsedAt) await new Promise((r) => setTimeout(r, 20));
    }
    expect(lastUsedAt).not.toBeNull();
    expect(Date.parse(lastUsedAt!)).toBeGreaterThanOrEqual(Date.parse(apiKey.createdAt));
    // Once lastUsedAt is set the key keeps working, and a use within the throttle window writes nothing.
    expect((await suite.api.get(`/v1/${tenant.slug}/tenant`, { token: plaintext })).status).toBe(200);
    const again = await suite.api.get(`/v1/${tenant.slug}/api-keys`, { token: tenant.accessToken });
    expect(again.body.items.find((k: any) => k.id === apiKey.id).lastUsedAt).toBe(lastUsedAt);
  });

  it('an expired key answers 401', async () => {
    const tenant = await createTenant(suite.api);
    const { plaintext, apiKey } = await createKey(tenant, { name: 'k', environment: 'live', expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect((await suite.api.get(`/v1/${tenant.slug}/users`, { token: plaintext })).status).toBe(200);
    await sql(`update api_key set expires_at = now() - interval '1 second' where id = ?`, [apiKey.id]);
    expectError(await suite.api.get(`/v1/${tenant.slug}/users`, { token: plaintext }), 401, 'UNAUTHORIZED', 'api_key_expired');
  });

  it('a key of another tenant answers 401 tenant_mismatch; an unknown key 401', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const { plaintext } = await createKey(other);
    expectError(await suite.api.get(`/v1/${tenant.slug}/users`, { token: plaintext }), 401, 'UNAUTHORIZED', 'tenant_mismatch');
    expectError(await suite.api.get(`/v1/${tenant.slug}/users`, { token: `ak_live_${'x'.repeat(40)}` }), 401, 'UNAUTHORIZED', 'invalid_token');
  });
});

describe('DELETE /v1/{tenantSlug}/api-keys/{id}', () => {
  it('revokes: the key fails at once, is listed only with includeRevoked, ApiKeyRevoked is audited once', async () => {
    const tenant = await createTenant(suite.api);
    const { plaintext, apiKey } = await createKey(tenant);
    const kept = await createKey(tenant);
    expect((await suite.api.get(`/v1/${tenant.slug}/users`, { token: plaintext })).status).toBe(200);
    const res = await suite.api.delete(`/v1/${tenant.slug}/api-keys/${apiKey.id}`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expectError(await suite.api.get(`/v1/${tenant.slug}/users`, { token: plaintext }), 401, 'UNAUTHORIZED', 'api_key_revoked');

    const active = await suite.api.get(`/v1/${tenant.slug}/api-keys`, { token: tenant.accessToken });
    expect(active.body.items.map((k: any) => k.id)).toEqual([kept.apiKey.id]);
    const all = await suite.api.get(`/v1/${tenant.slug}/api-keys?includeRevoked=true`, { token: tenant.accessToken });
    expect(all.body.items.map((k: any) => k.id)).toEqual([kept.apiKey.id, apiKey.id]);
    expect(all.body.items[1].revokedAt).toEqual(expect.any(String));

    expect((await suite.api.delete(`/v1/${tenant.slug}/api-keys/${apiKey.id}`, { token: tenant.accessToken })).status).toBe(200);
    const audit = await suite.api.get(`/v1/${tenant.slug}/audit?action=ApiKeyRevoked`, { token: tenant.accessToken });
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({ targetType: 'api_key', targetId: apiKey.id, details: { prefix: apiKey.prefix } });
  });

  it('a key can revoke itself', async () => {
    const tenant = await createTenant(suite.api);
    const { plaintext, apiKey } = await createKey(tenant);
    expect((await suite.api.delete(`/v1/${tenant.slug}/api-keys/${apiKey.id}`, { token: plaintext })).status).toBe(200);
    expectError(await suite.api.get(`/v1/${tenant.slug}/api-keys`, { token: plaintext }), 401, 'UNAUTHORIZED', 'api_key_revoked');
    const audit = await suite.api.get(`/v1/${tenant.slug}/audit?action=ApiKeyRevoked`, { token: tenant.accessToken });
    expect(audit.body.items[0]).toMatchObject({ actorType: 'api_key', actorId: apiKey.id });
  });

  it('answers 404 for an unknown id, a malformed id and a key of another tenant', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const { apiKey } = await createKey(other);
    for (const id of [apiKey.id, 'nope', '00000000-0000-4000-8000-000000000000']) {
      expectError(await suite.api.delete(`/v1/${tenant.slug}/api-keys/${id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    }
    expect((await suite.api.get(`/v1/${other.slug}/api-keys`, { token: other.accessToken })).body.items[0].revokedAt).toBeNull();
  });
});

describe('an ak_test_ key (securityAdminProcedure)', () => {
  it('may read and exercise the tenant but not mint or revoke keys, nor change settings, the provider or webhooks', async () => {
    const tenant = await createTenant(suite.api);
    const test = await createKey(tenant, { name: 'ci', environment: 'test' });
    const live = await createKey(tenant, { name: 'backend', environment: 'live' });
    const asTest = { token: test.plaintext };
    const refused = (res: ApiResponse) => expectError(res, 403, 'FORBIDDEN', 'live_key_required');

    // what it is for: reading and ordinary administration
    expect((await suite.api.get(`/v1/${tenant.slug}/users`, asTest)).status).toBe(200);
    expect((await suite.api.get(`/v1/${tenant.slug}/tenant`, asTest)).status).toBe(200);
    // a stolen test key cannot mint a live key, nor revoke the tenant's live key
    refused(await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'mine', environment: 'live' }, asTest));
    refused(await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'mine', environment: 'test' }, asTest));
    refused(await suite.api.delete(`/v1/${tenant.slug}/api-keys/${live.apiKey.id}`, asTest));
    expect(await sql(`select 1 from api_key where tenant_id = ? and revoked_at is null`, [tenant.id])).toHaveLength(2);
    // nor weaken the tenant's security settings
    refused(await suite.api.patch(`/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Disabled' }, asTest));
    refused(await suite.api.patch(`/v1/${tenant.slug}/tenant`, { requireEmailVerification: false }, asTest));
    refused(await suite.api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId: 'c', clientSecret: 's' }, asTest));
    refused(await suite.api.delete(`/v1/${tenant.slug}/oauth/idp/credentials`, asTest));
    refused(await suite.api.post(`/v1/${tenant.slug}/webhooks`, { url: 'https://hooks.example.com/x' }, asTest));
    const [row] = await sql<{ mfa_policy: string }>('select mfa_policy from tenant where id = ?', [tenant.id]);
    expect(row!.mfa_policy).toBe('Optional');

    // a live key may
    const asLive = { token: live.plaintext };
    const minted = await suite.api.post(`/v1/${tenant.slug}/api-keys`, { name: 'rotated', environment: 'test' }, asLive);
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    expect((await suite.api.delete(`/v1/${tenant.slug}/api-keys/${test.apiKey.id}`, asLive)).status).toBe(200);
    expect((await suite.api.patch(`/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Required' }, asLive)).status).toBe(200);
  });
});
