import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();

describe('GET /v1/{tenantSlug}/users', () => {
  it('lists the live users as User objects, oldest first', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const res = await suite.api.get(`/v1/${tenant.slug}/users`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.items.map((u: any) => [u.email, u.role])).toEqual([
      [tenant.adminEmail, 'Admin'],
      [member.email, 'Member'],
    ]);
    const me = await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken });
    // `recoveryCodesRemaining` and `passwordSet` are the signed-in user's own facts, shown on GET me only.
    const { recoveryCodesRemaining: _codes, passwordSet: _password, ...user } = me.body as Record<string, unknown>;
    expect(res.body.items[1]).toEqual(user);
  });
});

describe('DELETE /v1/{tenantSlug}/users/{userId}', () => {
  it('soft-deletes: sessions end at once, the user leaves the list and cannot log in; UserSoftDeleted audited', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const res = await suite.api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expectError(await suite.api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: member.refreshToken }), 401, 'UNAUTHORIZED');
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: member.email, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');
    const users = await suite.api.get(`/v1/${tenant.slug}/users`, { token: tenant.accessToken });
    expect(users.body.items.map((u: any) => u.id)).toEqual([tenant.adminId]);
    const audit = await suite.api.get(`/v1/${tenant.slug}/audit?action=UserSoftDeleted`, { token: tenant.accessToken });
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({ actorId: tenant.adminId, targetType: 'user', targetId: member.id });
    expectError(await suite.api.delete(`/v1/${tenant.slug}/users/${member.id}`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
  });

  it('refuses to delete the last active admin (409 last_admin) and allows it once another admin exists', async () => {
    const tenant = await createTenant(suite.api);
    expectError(await suite.api.delete(`/v1/${tenant.slug}/users/${tenant.adminId}`, { token: tenant.accessToken }), 409, 'CONFLICT', 'last_admin');
    const invite = await suite.api.post(`/v1/${tenant.slug}/invites`, { email: `second-${Date.now()}@example.com`, role: 'Admin' }, { token: tenant.accessToken });
    const second = await suite.api.post('/v1/invites/accept', { token: invite.body.token, password: PASSWORD });
    expect(second.status).toBe(200);
    expect((await suite.api.delete(`/v1/${tenant.slug}/users/${tenant.adminId}`, { token: second.body.accessToken })).status).toBe(200);
    expectError(await suite.api.delete(`/v1/${tenant.slug}/users/${second.body.user.id}`, { token: second.body.accessToken }), 409, 'CONFLICT', 'last_admin');
  });

  it('answers 400 for a non-uuid id and 404 for an unknown user or a user of another tenant', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    expectError(await suite.api.delete(`/v1/${tenant.slug}/users/not-a-uuid`, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
    expectError(await suite.api.delete(`/v1/${tenant.slug}/users/00000000-0000-4000-8000-000000000000`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
    expectError(await suite.api.delete(`/v1/${tenant.slug}/users/${other.adminId}`, { token: tenant.accessToken }), 404, 'NOT_FOUND');
  });
});

describe('GET and PATCH /v1/{tenantSlug}/tenant', () => {
  it('returns the Tenant object', async () => {
    const tenant = await createTenant(suite.api, `Settings ${Date.now()}`);
    const res = await suite.api.get(`/v1/${tenant.slug}/tenant`, { token: tenant.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: tenant.id,
      slug: tenant.slug,
      name: expect.stringMatching(/^Settings /),
      plan: 'Free',
      mfaPolicy: 'Optional',
      idpOauthEnabled: false,
      idpClientId: '',
      hasIdpClientSecret: false,
      idpIssuer: expect.stringMatching(/^https?:\/\//),
      idpIssuerIsDefault: true,
      idpAllowedEmailDomains: [],
      idpRedirectUri: expect.stringMatching(new RegExp(`/v1/${tenant.slug}/oauth/idp/callback$`)),
      requireEmailVerification: false,
      signupPolicy: 'Open',
      signupEmailDomains: [],
      idpMfaTrust: false,
      defaultLocale: 'en',
      displayName: null,
      primaryColor: null,
      supportUrl: null,
      logoUrl: null,
      darkLogoUrl: null,
      brandDisplay: 'LogoAndName',
      passwordPolicy: { minLength: 12, rejectCommon: true },
      lockout: { maxFailedAttempts: 10, windowSeconds: 900 },
      sessionPolicy: { refreshTokenLifetimeSeconds: 2_592_000 },
      createdAt: expect.any(String),
    });
  });

  it('changes name, mfaPolicy and requireEmailVerification, keeps the slug, and audits the changed fields', async () => {
    const tenant = await createTenant(suite.api);
    const res = await suite.api.patch(`/v1/${tenant.slug}/tenant`, { name: '  Renamed  ', mfaPolicy: 'Required', requireEmailVerification: true }, { token: tenant.accessToken });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ slug: tenant.slug, name: 'Renamed', mfaPolicy: 'Required', requireEmailVerification: true });
    expect((await suite.api.get(`/v1/${tenant.slug}/tenant`, { token: tenant.accessToken })).body).toEqual(res.body);

    const partial = await suite.api.patch(`/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Disabled', name: 'Renamed' }, { token: tenant.accessToken });
    expect(partial.body).toMatchObject({ name: 'Renamed', mfaPolicy: 'Disabled', requireEmailVerification: true });
    expect((await suite.api.patch(`/v1/${tenant.slug}/tenant`, {}, { token: tenant.accessToken })).status).toBe(200);

    const audit = await suite.api.get(`/v1/${tenant.slug}/audit?action=TenantUpdated`, { token: tenant.accessToken });
    expect(audit.body.items.map((e: any) => e.details.changes)).toEqual([
      { mfaPolicy: { from: 'Required', to: 'Disabled' } },
      {
        name: { from: expect.any(String), to: 'Renamed' },
        mfaPolicy: { from: 'Optional', to: 'Required' },
        requireEmailVerification: { from: false, to: true },
      },
    ]);
  });

  it.each([
    ['empty name', { name: '' }],
    ['blank name', { name: '   ' }],
    ['name over 120', { name: 'n'.repeat(121) }],
    ['unknown mfaPolicy', { mfaPolicy: 'Sometimes' }],
    ['non-boolean requireEmailVerification', { requireEmailVerification: 'yes' }],
    ['string "false" for requireEmailVerification', { requireEmailVerification: 'false' }],
    ['non-string name', { name: 5 }],
  ])('answers 400 for %s', async (_label, body) => {
    const tenant = await createTenant(suite.api);
    expectError(await suite.api.patch(`/v1/${tenant.slug}/tenant`, body, { token: tenant.accessToken }), 400, 'BAD_REQUEST');
  });
});
