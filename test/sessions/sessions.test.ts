import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTenant(suite.api);
});

async function login(email: string) {
  const res = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD });
  expect(res.status).toBe(200);
  return res.body as { accessToken: string; refreshToken: string };
}

const refresh = (refreshToken: string, slug = tenant.slug) => suite.api.post(`/v1/${slug}/auth/refresh`, { refreshToken });
const me = (token: string, slug = tenant.slug) => suite.api.get(`/v1/${slug}/me`, { token });

describe('auth/refresh', () => {
  it('returns a new pair and invalidates the presented refresh token', async () => {
    const { email } = await signupMember(suite.api, tenant.slug);
    const first = await login(email);
    const second = await refresh(first.refreshToken);
    expect(second.status).toBe(200);
    expect(second.body.refreshToken).not.toBe(first.refreshToken);
    expect(second.body.accessTokenExpiresIn).toBe(900);
    expect(second.body.user.email).toBe(email);
    expect((await me(second.body.accessToken)).status).toBe(200);
    // the new refresh token rotates again
    const third = await refresh(second.body.refreshToken);
    expect(third.status).toBe(200);
  });

  it('revokes the whole family when a rotated token is replayed', async () => {
    const { email } = await signupMember(suite.api, tenant.slug);
    const first = await login(email);
    const second = await refresh(first.refreshToken);
    const third = await refresh(second.body.refreshToken);
    expect(third.status).toBe(200);

    expectError(await refresh(first.refreshToken), 401, 'UNAUTHORIZED', 'refresh_token_reused');
    // every descendant is dead: the newest refresh token and the access tokens of the family
    expectError(await refresh(third.body.refreshToken), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await me(third.body.accessToken), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await me(first.accessToken), 401, 'UNAUTHORIZED', 'session_revoked');

    const rows = await suite.server.services.orm.em.fork().execute<{ action: string }[]>(
      `select action from audit_event where tenant_id = ? and action = 'SessionFamilyCompromised'`,
      [tenant.id],
    );
    expect(rows.length).toBeGreaterThanOrEqual(1);
  });

  it('leaves other sessions of the same user alive when one family is revoked', async () => {
    const { email } = await signupMember(suite.api, tenant.slug);
    const a = await login(email);
    const b = await login(email);
    await refresh(a.refreshToken);
    await refresh(a.refreshToken);
    expect((await me(b.accessToken)).status).toBe(200);
    expect((await refresh(b.refreshToken)).status).toBe(200);
  });

  it('lets exactly one of two concurrent refreshes of one token win', async () => {
    for (let round = 0; round < 3; round++) {
      const { email } = await signupMember(suite.api, tenant.slug);
      const session = await login(email);
      const results = await Promise.all([refresh(session.refreshToken), refresh(session.refreshToken), refresh(session.refreshToken)]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 401, 401]);
      for (const r of results.filter((x) => x.status === 401)) {
        expect(['refresh_token_reused', 'session_revoked']).toContain(r.body.details.reason);
      }
    }
  });

  it('answers 401 invalid_token for an unknown token and a token of another tenant', async () => {
    expectError(await refresh('not-a-real-token'), 401, 'UNAUTHORIZED', 'invalid_token');
    const other = await createTenant(suite.api);
    expectError(await refresh(other.refreshToken), 401, 'UNAUTHORIZED', 'invalid_token');
    // the other tenant's token was not consumed by the failed attempt
    expect((await refresh(other.refreshToken, other.slug)).status).toBe(200);
  });

  it('answers 404 tenant_not_found for an unknown workspace, and for a deleted one without rotating its live token', async () => {
    expectError(await refresh('not-a-real-token', `no-such-${Date.now()}`), 404, 'NOT_FOUND', 'tenant_not_found');
    const gone = await createTenant(suite.api);
    expect((await suite.api.delete(`/v1/${gone.slug}/tenant`, { token: gone.accessToken })).status).toBe(200);
    expectError(await refresh(gone.refreshToken, gone.slug), 404, 'NOT_FOUND', 'tenant_not_found');
    const rotated = await suite.server.services.orm.em.fork().execute<{ rotated: number }[]>(
      'select count(*)::int as rotated from refresh_token where tenant_id = ? and rotated_at is not null', [gone.id],
    );
    expect(rotated[0]!.rotated).toBe(0);
  });

  it('answers 401 refresh_token_expired for an expired token', async () => {
    const { email } = await signupMember(suite.api, tenant.slug);
    const s = await login(email);
    await suite.server.services.orm.em.fork().execute(
      `update refresh_token set expires_at = now() - interval '1 second' where tenant_id = ? and rotated_at is null
         and session_id in (select id from session where user_id = (select id from app_user where email = ? and tenant_id = ?))`,
      [tenant.id, email, tenant.id],
    );
    expectError(await refresh(s.refreshToken), 401, 'UNAUTHORIZED', 'refresh_token_expired');
  });

  it.each([
    ['empty token', { refreshToken: '' }],
    ['token over 1024', { refreshToken: 'x'.repeat(1025) }],
    ['no token', {}],
  ])('answers 400 for %s', async (_l, body) => {
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/refresh`, body), 400, 'BAD_REQUEST');
  });
});

describe('auth/logout', () => {
  it('ends only that session, at once for its access token', async () => {
    const { email } = await signupMember(suite.api, tenant.slug);
    const a = await login(email);
    const b = await login(email);
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: a.refreshToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expectError(await me(a.accessToken), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await refresh(a.refreshToken), 401, 'UNAUTHORIZED', 'session_revoked');
    expect((await me(b.accessToken)).status).toBe(200);
  });

  it('answers ok for unknown or already-ended tokens', async () => {
    expect((await suite.api.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: 'unknown-token' })).body).toEqual({ ok: true });
    const { email } = await signupMember(suite.api, tenant.slug);
    const a = await login(email);
    await suite.api.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: a.refreshToken });
    const again = await suite.api.post(`/v1/${tenant.slug}/auth/logout`, { refreshToken: a.refreshToken });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ok: true });
  });

  it('answers 404 for an unknown tenant', async () => {
    expectError(await suite.api.post('/v1/no-such-tenant-xyz/auth/logout', { refreshToken: 'x' }), 404, 'NOT_FOUND');
  });
});

describe('auth/logout-all', () => {
  it('ends every session of the user and reports the count', async () => {
    const { email, accessToken } = await signupMember(suite.api, tenant.slug);
    const a = await login(email);
    const b = await login(email);
    const res = await suite.api.post(`/v1/${tenant.slug}/auth/logout-all`, undefined, { token: a.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, count: 3 });
    for (const token of [a.accessToken, b.accessToken, accessToken]) expectError(await me(token), 401, 'UNAUTHORIZED', 'session_revoked');
    expectError(await refresh(b.refreshToken), 401, 'UNAUTHORIZED', 'session_revoked');
  });

  it('does not touch other users', async () => {
    const one = await signupMember(suite.api, tenant.slug);
    const two = await signupMember(suite.api, tenant.slug);
    await suite.api.post(`/v1/${tenant.slug}/auth/logout-all`, undefined, { token: one.accessToken });
    expect((await me(two.accessToken)).status).toBe(200);
  });

  it('needs a bearer token', async () => {
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/logout-all`), 401, 'UNAUTHORIZED', 'missing_credential');
    expectError(await suite.api.post(`/v1/${tenant.slug}/auth/logout-all`, undefined, { token: 'garbage' }), 401, 'UNAUTHORIZED', 'invalid_token');
  });
});

describe('tenant isolation', () => {
  it('refuses an access token of tenant A on a route of tenant B with 401 tenant_mismatch', async () => {
    const other = await createTenant(suite.api);
    expectError(await me(tenant.accessToken, other.slug), 401, 'UNAUTHORIZED', 'tenant_mismatch');
    expectError(await suite.api.post(`/v1/${other.slug}/auth/logout-all`, undefined, { token: tenant.accessToken }), 401, 'UNAUTHORIZED', 'tenant_mismatch');
    expect((await me(other.accessToken, other.slug)).status).toBe(200);
  });
});
