import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A REST body is JSON and is validated as sent (patches/trpc-to-openapi+3.3.0.patch): only path and
 * query parameters are converted from strings, and the procedure's shared Zod schema is never changed,
 * so one REST call cannot loosen the typed `/trpc` endpoint either.
 */
let server: TestServer;
let api: Api;
let tenant: TestTenant;

beforeAll(async () => {
  server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  api = new Api(server.url);
  tenant = await createTenant(api);
});
afterAll(async () => {
  await server?.close();
});

async function trpc(path: string, input: unknown, token: string): Promise<{ status: number; body: { error?: { data: { details: { reason: string } } } } }> {
  const res = await fetch(`${server.url}/trpc/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(input),
  });
  return { status: res.status, body: (await res.json()) as never };
}

describe('REST bodies are not coerced', () => {
  it('PATCH webhooks/{id} {"enabled":"false"} is 400 on REST and then still 400 on /trpc; the webhook stays off', async () => {
    const token = { token: tenant.accessToken };
    const created = await api.post(`/v1/${tenant.slug}/webhooks`, { url: 'http://127.0.0.1:9/hook' }, token);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.webhook?.id ?? created.body.id;
    expect((await api.patch(`/v1/${tenant.slug}/webhooks/${id}`, { enabled: false }, token)).status).toBe(200);
    for (const enabled of ['false', 'true', {}, [], 1]) {
      expectError(await api.patch(`/v1/${tenant.slug}/webhooks/${id}`, { enabled }, token), 400, 'BAD_REQUEST', 'validation_failed');
    }
    const typed = await trpc('webhooks.update', { tenantSlug: tenant.slug, id, enabled: 'false' }, tenant.accessToken);
    expect(typed.status).toBe(400);
    const list = await api.get(`/v1/${tenant.slug}/webhooks`, token);
    expect(list.body.items.find((w: { id: string }) => w.id === id).enabled).toBe(false);
  });

  it('invites refuse "ttlSeconds" as a string; query numbers still convert', async () => {
    const token = { token: tenant.accessToken };
    const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: 'string-ttl@example.com', role: 'Member', ttlSeconds: '3600' }, token);
    expectError(invite, 400, 'BAD_REQUEST', 'validation_failed');
    expect((await api.get(`/v1/${tenant.slug}/audit?limit=1`, token)).status).toBe(200);
  });
});

describe('one email rule', () => {
  it('refuses a hyphen-ended domain label, a 65-character local part and a double dot with 400, on REST and /trpc', async () => {
    for (const email of ['someone@mail-.example.com', `${'a'.repeat(65)}@example.com`, 'a..b@example.com']) {
      expectError(await api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: 'a long enough passphrase' }), 400, 'BAD_REQUEST', 'validation_failed');
      const typed = await fetch(`${server.url}/trpc/auth.signup`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tenantSlug: tenant.slug, email, password: 'a long enough passphrase' }),
      });
      expect(typed.status).toBe(400);
    }
    const ok = await api.post(`/v1/${tenant.slug}/auth/signup`, { email: `${'a'.repeat(64)}@example.com`, password: 'a long enough passphrase' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});

