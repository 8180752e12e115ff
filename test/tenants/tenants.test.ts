import { describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, unique } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();

describe('POST /v1/tenants', () => {
  it('creates a tenant from the nested body with an Admin session and tenantSlug', async () => {
    const name = `Acme ${unique()} Inc.`;
    const email = `Owner-${unique()}@Example.com`;
    const res = await suite.api.post('/v1/tenants', { tenant: { name }, admin: { email, password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body.tenantSlug).toBe(name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''));
    expect(res.body.tenant).toMatchObject({ slug: res.body.tenantSlug, name });
    expect(res.body.user).toMatchObject({ email: email.toLowerCase(), role: 'Admin' });
    expect(res.body.accessTokenExpiresIn).toBe(900);
    expect(res.body.refreshTokenExpiresIn).toBe(2592000);
    expect(res.body.accessToken.split('.')).toHaveLength(3);
    expect(res.headers.get('cache-control')).toBe('no-store');

    const tenant = await suite.api.get(`/v1/${res.body.tenantSlug}/me`, { token: res.body.accessToken });
    expect(tenant.status).toBe(200);
    expect(tenant.body.tenant).toEqual({ slug: res.body.tenantSlug, name });
  });

  it('accepts the flat body form', async () => {
    const res = await suite.api.post('/v1/tenants', { name: `Flat ${unique()}`, email: `f-${unique()}@example.com`, password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.user.role).toBe('Admin');
    expect(typeof res.body.tenantSlug).toBe('string');
  });

  it('answers 409 for a taken slug', async () => {
    const name = `Dup ${unique()}`;
    await createTenant(suite.api, name);
    const res = await suite.api.post('/v1/tenants', { name: name.toUpperCase(), email: `x-${unique()}@example.com`, password: PASSWORD });
    expectError(res, 409, 'CONFLICT');
  });

  it('limits the slug to 63 characters', async () => {
    const name = `${unique()}${'x'.repeat(110)}`;
    const res = await suite.api.post('/v1/tenants', { name, email: `l-${unique()}@example.com`, password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.tenantSlug).toHaveLength(63);
  });

  it.each([
    ['missing admin', { tenant: { name: 'x' } }],
    ['both forms', { tenant: { name: 'x' }, admin: { email: 'a@b.co', password: PASSWORD }, name: 'y' }],
    ['empty name', { name: '', email: 'a@b.co', password: PASSWORD }],
    ['name over 120', { name: 'n'.repeat(121), email: 'a@b.co', password: PASSWORD }],
    ['short password', { name: 'ok', email: 'a@b.co', password: 'x'.repeat(11) }],
    ['password over 1024', { name: 'ok', email: 'a@b.co', password: 'x'.repeat(1025) }],
    ['bad email', { name: 'ok', email: 'not-an-email', password: PASSWORD }],
    ['email over 254', { name: 'ok', email: `${'a'.repeat(250)}@b.co`, password: PASSWORD }],
    ['name without letters', { name: '!!!', email: 'a@b.co', password: PASSWORD }],
  ])('answers 400 for %s', async (_label, body) => {
    const res = await suite.api.post('/v1/tenants', body);
    expectError(res, 400, 'BAD_REQUEST');
  });

  it('lists the validation issues in details.issues', async () => {
    // a short password is the password policy's (password_too_short), checked once the body is valid
    const res = await suite.api.post('/v1/tenants', { name: 'ok', email: 'nope', password: 1234 });
    expectError(res, 400, 'BAD_REQUEST');
    const paths = (res.body.details.issues as { path: string }[]).map((i) => i.path).sort();
    expect(paths).toEqual(['email', 'password']);
  });
});
