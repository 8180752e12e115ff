import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, unique, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTenant(suite.api);
});

async function auditActions(tenantId: string): Promise<string[]> {
  const rows = await suite.server.services.orm.em.fork().execute<{ action: string }[]>(
    'select action from audit_event where tenant_id = ? order by created_at',
    [tenantId],
  );
  return rows.map((r) => r.action);
}

describe('auth/signup', () => {
  it('creates an Active Member and returns a working session', async () => {
    const email = `New-${unique()}@Example.com`;
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/signup`, { email, password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ email: email.toLowerCase(), role: 'Member', status: 'Active' });
    expect(res.body.tenantSlug).toBeUndefined();
    const me = await suite.api.get(`/v1/${tenant.slug}/me`, { token: res.body.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: email.toLowerCase(), role: 'Member', status: 'Active', tenantId: tenant.id, totpEnrolled: false });
  });

  it('answers 409 for an email already in the tenant, compared case-insensitively', async () => {
    const { email } = await signupMember(suite.api, tenant.slug);
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/signup`, { email: email.toUpperCase(), password: PASSWORD });
    expectError(res, 409, 'CONFLICT', 'email_taken');
  });

  it('lets the same email exist in another tenant', async () => {
    const other = await createTenant(suite.api);
    const res = await suite.api.post(`/v1/${other.slug}/auth/signup`, { email: tenant.adminEmail, password: PASSWORD });
    expect(res.status).toBe(200);
  });

  it('answers 400 password_too_short for a password of 11 characters (the workspace\'s policy, docs/api-rules.md "Workspace policies")', async () => {
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/signup`, { email: 'a@b.co', password: 'x'.repeat(11) });
    expectError(res, 400, 'BAD_REQUEST', 'password_too_short');
    expect(res.body.details.minLength).toBe(12);
  });

  it.each([
    ['password of 1025 characters', { email: 'a@b.co', password: 'x'.repeat(1025) }],
    ['email of 255 characters', { email: `${'a'.repeat(249)}@b.com`, password: PASSWORD }],
    ['missing email', { password: PASSWORD }],
    ['number as password', { email: 'a@b.co', password: 123456789012345 }],
  ])('answers 400 for %s', async (_l, body) => {
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/signup`, body), 400, 'BAD_REQUEST', 'validation_failed');
  });

  it('accepts a password of exactly 12 and of 1024 characters', async () => {
    for (const password of ['x'.repeat(12), 'y'.repeat(1024)]) {
      const res = await suite.api.post(`/v1/${tenant.slug}/auth/signup`, { email: `p-${unique()}@example.com`, password });
      expect(res.status).toBe(200);
    }
  });

  it('answers 404 for an unknown tenant', async () => {
    expectError(await suite.api.post(`/v1/no-such-${unique()}/auth/signup`, { email: 'a@b.co', password: PASSWORD }), 404, 'NOT_FOUND');
  });

  it('stores the password as an argon2id hash only', async () => {
    const { id } = await signupMember(suite.api, tenant.slug);
    const rows = await suite.server.services.orm.em.fork().execute<{ password_hash: string }[]>(
      'select password_hash from app_user where id = ?',
      [id],
    );
    expect(rows[0]!.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(rows[0]!.password_hash).not.toContain(PASSWORD);
  });
});

describe('auth/login', () => {
  it('signs in with the right password, email in any case', async () => {
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: tenant.adminEmail.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: tenant.adminId, role: 'Admin' });
    expect(res.body.accessTokenExpiresIn).toBe(900);
    expect(res.body.refreshTokenExpiresIn).toBe(2592000);
  });

  it('answers the same 401 invalid_credentials for a wrong password and an unknown email', async () => {
    const wrong = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: tenant.adminEmail, password: 'wrong password' });
    const unknown = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email: `ghost-${unique()}@example.com`, password: 'wrong password' });
    expectError(wrong, 401, 'UNAUTHORIZED', 'invalid_credentials');
    expectError(unknown, 401, 'UNAUTHORIZED', 'invalid_credentials');
    expect(wrong.body.message).toBe(unknown.body.message);
  });

  it('does not let a user of one tenant sign in to another', async () => {
    const other = await createTenant(suite.api);
    expectError(await suite.api.post(`/v1/${other.slug}/auth/login`, { email: tenant.adminEmail, password: PASSWORD }), 401, 'UNAUTHORIZED', 'invalid_credentials');
  });

  it.each([
    ['empty password', { email: 'a@b.co', password: '' }],
    ['password of 1025', { email: 'a@b.co', password: 'x'.repeat(1025) }],
    ['totpCode of 5 digits', { email: 'a@b.co', password: 'x', totpCode: '12345' }],
    ['totpCode with letters', { email: 'a@b.co', password: 'x', totpCode: '12345a' }],
    ['emailOtpCode of 7 digits', { email: 'a@b.co', password: 'x', emailOtpCode: '1234567' }],
    ['bad email', { email: 'a', password: 'x' }],
  ])('answers 400 for %s', async (_l, body) => {
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/login`, body), 400, 'BAD_REQUEST');
  });

  it('audits UserLogin, UserLoginFailed and SessionCreated with IP and user agent', async () => {
    const t = await createTenant(suite.api);
    await suite.api.post(`/v1/${t.slug}/auth/login`, { email: t.adminEmail, password: 'nope nope' }, { headers: { 'user-agent': 'audit-test/1.0' } });
    await suite.api.post(`/v1/${t.slug}/auth/login`, { email: t.adminEmail, password: PASSWORD }, { headers: { 'user-agent': 'audit-test/1.0' } });
    const actions = await auditActions(t.id);
    expect(actions).toEqual(expect.arrayContaining(['TenantCreated', 'UserSignup', 'SessionCreated', 'UserLoginFailed', 'UserLogin']));
    const rows = await suite.server.services.orm.em.fork().execute<{ ip: string; user_agent: string }[]>(
      `select ip, user_agent from audit_event where tenant_id = ? and action = 'UserLogin'`,
      [t.id],
    );
    expect(rows[0]!.user_agent).toBe('audit-test/1.0');
    expect(rows[0]!.ip).toMatch(/127\.0\.0\.1/);
  });
});
