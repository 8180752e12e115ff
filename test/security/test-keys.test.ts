import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Test keys grant nothing (docs/security.md "Test keys", docs/api-rules.md "Test keys grant nothing"):
 * every change that grants access or weakens a factor answers an `ak_test_` key 403
 * `live_key_required` and changes nothing; the same request with an `ak_live_` key is admitted. A test
 * key still reads and invites Members.
 */

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = new Api(server.url);
});
afterAll(async () => {
  await server?.close();
});

interface Fixture {
  tenant: TestTenant;
  testKey: string;
  liveKey: string;
  memberId: string;
  applicationId: string;
  adminInviteId: string;
}

async function key(tenant: TestTenant, environment: 'live' | 'test'): Promise<string> {
  const res = await api.post(`/v1/${tenant.slug}/api-keys`, { name: environment, environment }, { token: tenant.accessToken });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.plaintext as string;
}

async function fixture(): Promise<Fixture> {
  const tenant = await createTenant(api);
  const member = await signupMember(api, tenant.slug);
  const app = await api.post(`/v1/${tenant.slug}/applications`, { name: 'Shop', type: 'spa', redirectUris: ['https://shop.example.com/cb'] }, { token: tenant.accessToken });
  expect(app.status).toBe(200);
  const invite = await api.post(`/v1/${tenant.slug}/invites`, { email: `boss-${unique()}@example.com`, role: 'Admin' }, { token: tenant.accessToken });
  expect(invite.status).toBe(200);
  return {
    tenant, testKey: await key(tenant, 'test'), liveKey: await key(tenant, 'live'), memberId: member.id,
    applicationId: app.body.application.id as string, adminInviteId: invite.body.invite.id as string,
  };
}

type Send = (f: Fixture, token: string) => Promise<ApiResponse>;

/** Every route through which a credential could grant access (an Admin, a factor gone, a code sent elsewhere). */
const GRANTING_ROUTES: { name: string; send: Send }[] = [
  { name: 'POST invites (role Admin)', send: (f, token) => api.post(`/v1/${f.tenant.slug}/invites`, { email: `evil-${unique()}@evil.test`, role: 'Admin' }, { token }) },
  { name: 'POST invites/{id}/resend of an Admin invite', send: (f, token) => api.post(`/v1/${f.tenant.slug}/invites/${f.adminInviteId}/resend`, {}, { token }) },
  { name: 'PATCH users/{id} role', send: (f, token) => api.patch(`/v1/${f.tenant.slug}/users/${f.memberId}`, { role: 'Admin' }, { token }) },
  { name: 'PATCH users/{id} status', send: (f, token) => api.patch(`/v1/${f.tenant.slug}/users/${f.memberId}`, { status: 'Suspended' }, { token }) },
  { name: 'POST users/{id}/totp/disable', send: (f, token) => api.post(`/v1/${f.tenant.slug}/users/${f.memberId}/totp/disable`, {}, { token }) },
  { name: 'POST users/{id}/restore', send: (f, token) => api.post(`/v1/${f.tenant.slug}/users/${f.memberId}/restore`, {}, { token }) },
  { name: 'DELETE users/{id}', send: (f, token) => api.delete(`/v1/${f.tenant.slug}/users/${f.memberId}`, { token }) },
  {
    name: 'PATCH applications/{id} redirect URIs',
    send: (f, token) => api.patch(`/v1/${f.tenant.slug}/applications/${f.applicationId}`, { redirectUris: ['https://attacker.example/steal'] }, { token }),
  },
  { name: 'POST applications', send: (f, token) => api.post(`/v1/${f.tenant.slug}/applications`, { name: 'Evil', type: 'spa', redirectUris: ['https://evil.example/cb'] }, { token }) },
  { name: 'POST applications/{id}/rotate-secret', send: (f, token) => api.post(`/v1/${f.tenant.slug}/applications/${f.applicationId}/rotate-secret`, {}, { token }) },
  { name: 'DELETE applications/{id}', send: (f, token) => api.delete(`/v1/${f.tenant.slug}/applications/${f.applicationId}`, { token }) },
  { name: 'POST api-keys (live)', send: (f, token) => api.post(`/v1/${f.tenant.slug}/api-keys`, { name: 'x', environment: 'live' }, { token }) },
  { name: 'PATCH tenant mfaPolicy', send: (f, token) => api.patch(`/v1/${f.tenant.slug}/tenant`, { mfaPolicy: 'Off' }, { token }) },
  { name: 'POST webhooks', send: (f, token) => api.post(`/v1/${f.tenant.slug}/webhooks`, { url: 'https://hooks.example.com/x', eventTypes: ['UserLogin'] }, { token }) },
];

describe('an ak_test_ key grants nothing', () => {
  for (const route of GRANTING_ROUTES) {
    it(`${route.name}: 403 live_key_required for a test key`, async () => {
      const f = await fixture();
      const before = await api.get(`/v1/${f.tenant.slug}/users/${f.memberId}`, { token: f.tenant.accessToken });
      expectError(await route.send(f, f.testKey), 403, 'FORBIDDEN', 'live_key_required');
      const after = await api.get(`/v1/${f.tenant.slug}/users/${f.memberId}`, { token: f.tenant.accessToken });
      expect(after.body).toEqual(before.body);
      // the control: a live key is not refused for being a key
      const live = await route.send(f, f.liveKey);
      expect(live.status === 403 ? live.body.details?.reason : live.status, JSON.stringify(live.body)).not.toBe('live_key_required');
    });
  }

  it('still reads, and invites Members', async () => {
    const f = await fixture();
    expect((await api.get(`/v1/${f.tenant.slug}/users`, { token: f.testKey })).status).toBe(200);
    expect((await api.get(`/v1/${f.tenant.slug}/applications`, { token: f.testKey })).status).toBe(200);
    const invite = await api.post(`/v1/${f.tenant.slug}/invites`, { email: `new-${unique()}@example.com` }, { token: f.testKey });
    expect(invite.status, JSON.stringify(invite.body)).toBe(200);
    expect(invite.body.invite.role).toBe('Member');
    expect((await api.post(`/v1/${f.tenant.slug}/invites/${invite.body.invite.id}/resend`, {}, { token: f.testKey })).status).toBe(200);
  });

  it('leaves the Admin invite it could not resend working (nothing was superseded)', async () => {
    const f = await fixture();
    expectError(await api.post(`/v1/${f.tenant.slug}/invites/${f.adminInviteId}/resend`, {}, { token: f.testKey }), 403, 'FORBIDDEN', 'live_key_required');
    const list = await api.get(`/v1/${f.tenant.slug}/invites`, { token: f.tenant.accessToken });
    expect((list.body.items as { id: string; status: string }[]).find((i) => i.id === f.adminInviteId)!.status).toBe('Open');
  });
});
