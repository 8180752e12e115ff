import { describe, expect, it } from 'vitest';
import { createTenant, expectError, signupMember } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();

describe('GET /v1/{tenantSlug}/users/{userId}', () => {
  it('shows a user with verification, factors and provider links, never a secret', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const res = await suite.api.get(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      user: expect.objectContaining({ id: member.id, email: member.email, role: 'Member', totpEnrolled: false }),
      emailVerifiedAt: res.body.user.emailVerified ? expect.any(String) : null,
      passkeys: [],
      recoveryCodesRemaining: 0,
      providerLinks: [],
    });
    const list = await suite.api.get(`/v1/${tenant.slug}/users?search=${encodeURIComponent(member.email)}`, { token: tenant.accessToken });
    expect(res.body.user).toEqual(list.body.items[0]);
    expect(JSON.stringify(res.body)).not.toMatch(/hash|secret/i);
  });

  it('answers 404 for another tenant\'s user and a deleted user, 403 to members, 400 for a malformed id', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    expectError(await suite.api.get(`/v1/${tenant.slug}/users/${other.adminId}`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
    expectError(await suite.api.get(`/v1/${tenant.slug}/users/${tenant.adminId}`, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    expectError(await suite.api.get(`/v1/${tenant.slug}/users/not-a-uuid`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expect((await suite.api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken })).status).toBe(200);
    expectError(await suite.api.get(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND', 'not_found');
  });
});
