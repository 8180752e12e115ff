import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { rateLimitClientKey } from '../../src/services/rate-limits/rate-limiter.js';
import { Api, createTenant, expectError, PASSWORD, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Rate limits on one instance with the in-process store. `setup` (the default, very high scale)
 * creates tenants and users; the limited instances use RATE_LIMIT_SCALE 1 or 0.1 so the thresholds
 * of docs/api-rules.md are reached with few requests. Counters are per instance here, so tests on
 * different instances never share them. At most two instances are open at a time (the embedded
 * database serves few connections), each with one pooled connection there.
 */
const poolEnv: Record<string, string> = inject('embeddedDatabase') ? { DATABASE_POOL_MAX: '1' } : {};
let setup: TestServer;
let setupApi: Api;
const servers: TestServer[] = [];

async function limited(env: Record<string, string>): Promise<Api> {
  const server = await startTestServer({ ...poolEnv, ...env });
  servers.push(server);
  return new Api(server.url);
}

async function closeLimited(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
}

function from(ip: string | undefined): { headers: Record<string, string> } {
  return { headers: ip ? { 'x-forwarded-for': ip } : {} };
}

function login(api: Api, slug: string, email: string, password: string, ip?: string): Promise<ApiResponse> {
  return api.post(`/v1/${slug}/auth/login`, { email, password }, from(ip));
}

/** Asserts the 429 envelope with a `Retry-After` header equal to `details.retryAfterSeconds`. */
function expectRateLimited(res: ApiResponse, maxSeconds: number): void {
  expectError(res, 429, 'TOO_MANY_REQUESTS', 'rate_limited');
  const header = res.headers.get('retry-after');
  expect(header).toMatch(/^\d+$/);
  expect(res.body.details.retryAfterSeconds).toBe(Number(header));
  expect(Number(header)).toBeGreaterThanOrEqual(1);
  expect(Number(header)).toBeLessThanOrEqual(maxSeconds);
}

let tenant: TestTenant;

beforeAll(async () => {
  setup = await startTestServer(poolEnv);
  setupApi = new Api(setup.url);
  tenant = await createTenant(setupApi);
});
afterAll(async () => {
  await closeLimited();
  await setup?.close();
});

describe('login brute-force defence (scale 1)', () => {
  let api: Api;
  beforeAll(async () => {
    api = await limited({ RATE_LIMIT_SCALE: '1', TRUST_PROXY: 'true' });
  });
  afterAll(closeLimited);

  it('answers the 11th failed login of one account from one IP with 429, Retry-After and details.retryAfterSeconds', async () => {
    const { email } = await signupMember(setupApi, tenant.slug);
    for (let i = 0; i < 10; i += 1) {
      expectError(await login(api, tenant.slug, email, 'wrong password', '203.0.113.10'), 401, 'UNAUTHORIZED', 'invalid_credentials');
    }
    expectRateLimited(await login(api, tenant.slug, email, 'wrong password', '203.0.113.10'), 900);
    // The right password from that IP is refused too while the window lasts: the guesser learns nothing.
    expectRateLimited(await login(api, tenant.slug, email, PASSWORD, '203.0.113.10'), 900);
  });

  it('does not let an attacker on another IP lock the real user out', async () => {
    const { email } = await signupMember(setupApi, tenant.slug);
    for (let i = 0; i < 10; i += 1) await login(api, tenant.slug, email, 'wrong password', '198.51.100.66');
    expectRateLimited(await login(api, tenant.slug, email, 'wrong password', '198.51.100.66'), 900);
    const real = await login(api, tenant.slug, email, PASSWORD, '203.0.113.20');
    expect(real.status, JSON.stringify(real.body)).toBe(200);
  });

  it('limits parallel bursts exactly: at most 10 guesses get through', async () => {
    const { email } = await signupMember(setupApi, tenant.slug);
    const results = await Promise.all(Array.from({ length: 16 }, () => login(api, tenant.slug, email, 'wrong password', '203.0.113.30')));
    expect(results.filter((r) => r.status === 401)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(6);
  });

  it('clears the account+IP counter on a successful login', async () => {
    const { email } = await signupMember(setupApi, tenant.slug);
    for (let i = 0; i < 9; i += 1) expect((await login(api, tenant.slug, email, 'wrong', '203.0.113.40')).status).toBe(401);
    expect((await login(api, tenant.slug, email, PASSWORD, '203.0.113.40')).status).toBe(200);
    for (let i = 0; i < 10; i += 1) expect((await login(api, tenant.slug, email, 'wrong', '203.0.113.40')).status).toBe(401);
    expectRateLimited(await login(api, tenant.slug, email, 'wrong', '203.0.113.40'), 900);
  });

  it('counts unknown emails like known ones, so 429 reveals nothing about accounts', async () => {
    const email = `nobody-${unique()}@example.com`;
    for (let i = 0; i < 10; i += 1) expectError(await login(api, tenant.slug, email, 'x', '203.0.113.50'), 401, 'UNAUTHORIZED', 'invalid_credentials');
    expectRateLimited(await login(api, tenant.slug, email, 'x', '203.0.113.50'), 900);
  });

  it('does not count answers that are not failed guesses (validation errors)', async () => {
    const { email } = await signupMember(setupApi, tenant.slug);
    for (let i = 0; i < 12; i += 1) {
      expectError(await api.post(`/v1/${tenant.slug}/auth/login`, { email, password: '' }, from('203.0.113.60')), 400, 'BAD_REQUEST');
    }
    expect((await login(api, tenant.slug, email, PASSWORD, '203.0.113.60')).status).toBe(200);
  });

  it('also limits the typed /trpc endpoint with 429 and Retry-After', async () => {
    const { email } = await signupMember(setupApi, tenant.slug);
    const call = () => api.post('/trpc/auth.login', { tenantSlug: tenant.slug, email, password: 'wrong' }, from('203.0.113.70'));
    for (let i = 0; i < 10; i += 1) expect((await call()).status).toBe(401);
    const res = await call();
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res.body.error.data).toMatchObject({ code: 'TOO_MANY_REQUESTS', details: { reason: 'rate_limited', retryAfterSeconds: Number(res.headers.get('retry-after')) } });
  });
});

describe('account-wide bound (scale 0.1: 1 failure per account+IP, 10 per account)', () => {
  let api: Api;
  beforeAll(async () => {
    api = await limited({ RATE_LIMIT_SCALE: '0.1', TRUST_PROXY: 'true' });
  });
  afterAll(closeLimited);

  it('stops a distributed attack on one account but keeps the IP the user signed in from open', async () => {
    const { email } = await signupMember(setupApi, tenant.slug);
    expect((await login(api, tenant.slug, email, PASSWORD, '192.0.2.1')).status).toBe(200);
    for (let i = 0; i < 10; i += 1) {
      expectError(await login(api, tenant.slug, email, 'wrong', `198.51.100.${i + 1}`), 401, 'UNAUTHORIZED', 'invalid_credentials');
    }
    expectRateLimited(await login(api, tenant.slug, email, 'wrong', '198.51.100.200'), 900);
    // The real user's known address is exempt from the account-wide bound.
    expect((await login(api, tenant.slug, email, PASSWORD, '192.0.2.1')).status).toBe(200);
    // A first sign-in from a new address waits for the window, as documented.
    expectRateLimited(await login(api, tenant.slug, email, PASSWORD, '192.0.2.99'), 900);
  });
});

describe('per-IP and per-credential budgets (scale 0.1)', () => {
  let api: Api;
  beforeAll(async () => {
    api = await limited({ RATE_LIMIT_SCALE: '0.1', TRUST_PROXY: 'true' });
  });
  afterAll(closeLimited);

  it('refresh: 12 per minute per IP', async () => {
    for (let i = 0; i < 12; i += 1) {
      expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: `bogus-${i}` }, from('192.0.2.10')), 401, 'UNAUTHORIZED');
    }
    expectRateLimited(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: 'bogus' }, from('192.0.2.10')), 60);
    expectError(await api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: 'bogus' }, from('192.0.2.11')), 401, 'UNAUTHORIZED');
  });

  it('signup and tenant creation: 2 per hour per IP each', async () => {
    for (let i = 0; i < 2; i += 1) {
      const res = await api.post(`/v1/${tenant.slug}/auth/signup`, { email: `s-${unique()}@example.com`, password: PASSWORD }, from('192.0.2.20'));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    expectRateLimited(await api.post(`/v1/${tenant.slug}/auth/signup`, { email: `s-${unique()}@example.com`, password: PASSWORD }, from('192.0.2.20')), 3600);

    const body = () => ({ tenant: { name: `Limited ${unique()}` }, admin: { email: `a-${unique()}@example.com`, password: PASSWORD } });
    for (let i = 0; i < 2; i += 1) expect((await api.post('/v1/tenants', body(), from('192.0.2.21'))).status).toBe(200);
    expectRateLimited(await api.post('/v1/tenants', body(), from('192.0.2.21')), 3600);
  });

  it('authenticated routes: 60 per minute per credential; another session has its own budget', async () => {
    const member = await signupMember(setupApi, tenant.slug);
    for (let i = 0; i < 60; i += 1) expect((await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken })).status).toBe(200);
    expectRateLimited(await api.get(`/v1/${tenant.slug}/me`, { token: member.accessToken }), 60);
    const other = await login(setupApi, tenant.slug, member.email, PASSWORD);
    expect((await api.get(`/v1/${tenant.slug}/me`, { token: other.body.accessToken })).status).toBe(200);
  });
  it('the OpenID provider: 30 requests per minute per IP, and 60 per client id for a client authenticating with HTTP Basic (whatever its IP)', async () => {
    const discovery = `/v1/${tenant.slug}/oidc/.well-known/openid-configuration`;
    for (let i = 0; i < 30; i += 1) expect((await api.get(discovery, from('192.0.2.30'))).status).toBe(200);
    expectRateLimited(await api.get(discovery, from('192.0.2.30')), 60);
    // an anonymous authorization request stores an interaction: refused ones store nothing
    expectRateLimited(await api.get(`/v1/${tenant.slug}/oidc/auth?client_id=x&response_type=code&scope=openid&redirect_uri=https://a.example/cb`, from('192.0.2.30')), 60);
    expect((await api.get(discovery, from('192.0.2.31'))).status).toBe(200);

    const basic = { authorization: `Basic ${Buffer.from('app_flood:secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' };
    for (let i = 0; i < 60; i += 1) {
      const res = await fetch(`${api.baseUrl}/v1/${tenant.slug}/oidc/token`, { method: 'POST', headers: { ...basic, 'x-forwarded-for': `198.51.100.${i}` }, body: 'grant_type=client_credentials' });
      expect(res.status).toBe(401);
    }
    const refused = await fetch(`${api.baseUrl}/v1/${tenant.slug}/oidc/token`, { method: 'POST', headers: { ...basic, 'x-forwarded-for': '198.51.100.200' }, body: 'grant_type=client_credentials' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('the provider\'s sign-in hand-off: 30 per minute per IP on details, before the tenant look-up, complete and the provider counted apart; complete spends the session\'s credential budget', async () => {
    const details = (slug: string) => `/v1/${slug}/oidc/interaction/no-such-interaction/details`;
    for (let i = 0; i < 30; i += 1) expectError(await api.get(details(tenant.slug), from('192.0.2.40')), 401, 'UNAUTHORIZED', 'interaction_not_found');
    expectRateLimited(await api.get(details(tenant.slug), from('192.0.2.40')), 60);
    // spent before the workspace is looked up: an unknown one is refused alike
    expectRateLimited(await api.get(details('no-such-workspace-x'), from('192.0.2.40')), 60);
    // each route its own count: complete, and the provider's other endpoints, still answer that IP
    const member = await signupMember(setupApi, tenant.slug);
    const complete = `/v1/${tenant.slug}/oidc/interaction/no-such-interaction/complete`;
    expectError(await api.post(complete, {}, { token: member.accessToken, ...from('192.0.2.40') }), 401, 'UNAUTHORIZED', 'session_proof_required');
    expect((await api.get(`/v1/${tenant.slug}/oidc/.well-known/openid-configuration`, from('192.0.2.40'))).status).toBe(200);

    // the session's per-credential budget (60 at this scale) is one for every route: spent on GET me, complete is refused too
    const spender = await signupMember(setupApi, tenant.slug);
    for (let i = 0; i < 60; i += 1) expect((await api.get(`/v1/${tenant.slug}/me`, { token: spender.accessToken, ...from(`192.0.2.${100 + (i % 50)}`) })).status).toBe(200);
    expectRateLimited(await api.post(complete, { refreshToken: spender.refreshToken }, { token: spender.accessToken, ...from('192.0.2.41') }), 60);
  });
});

describe('client IP', () => {
  afterEach(closeLimited);
  const bogusLogin = (api: Api, ip: string) => api.post('/v1/no-such-tenant-x/auth/login', { email: 'a@example.com', password: 'x' }, from(ip));

  it('ignores X-Forwarded-For without TRUST_PROXY (the socket address is the key)', async () => {
    const api = await limited({ RATE_LIMIT_SCALE: '0.1' });
    for (let i = 0; i < 10; i += 1) expectError(await bogusLogin(api, `203.0.113.${i + 1}`), 404, 'NOT_FOUND');
    expectRateLimited(await bogusLogin(api, '203.0.113.200'), 60);
  });

  it('honours X-Forwarded-For with TRUST_PROXY', async () => {
    const api = await limited({ RATE_LIMIT_SCALE: '0.1', TRUST_PROXY: 'true' });
    for (let i = 0; i < 12; i += 1) expectError(await bogusLogin(api, `203.0.113.${i + 1}`), 404, 'NOT_FOUND');
    for (let i = 0; i < 10; i += 1) expectError(await bogusLogin(api, '198.51.100.7'), 404, 'NOT_FOUND');
    expectRateLimited(await bogusLogin(api, '198.51.100.7'), 60);
  });

  it('with TRUST_PROXY listing the proxies, takes the right-most untrusted hop, so a forged left part changes nothing', async () => {
    const api = await limited({ RATE_LIMIT_SCALE: '0.1', TRUST_PROXY: 'loopback' });
    for (let i = 0; i < 10; i += 1) expectError(await bogusLogin(api, `10.9.9.${i + 1}, 198.51.100.9`), 404, 'NOT_FOUND');
    expectRateLimited(await bogusLogin(api, '10.9.9.200, 198.51.100.9'), 60);
    expectError(await bogusLogin(api, '198.51.100.9, 198.51.100.10'), 404, 'NOT_FOUND');
  });

  it('keys IPv6 clients by their /64 and IPv4-mapped addresses as IPv4', () => {
    expect(rateLimitClientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(rateLimitClientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(rateLimitClientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(rateLimitClientKey('::1')).toBe('0:0:0:0::/64');
    expect(rateLimitClientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(rateLimitClientKey('192.0.2.1')).toBe('192.0.2.1');
    expect(rateLimitClientKey(null)).toBe('unknown');
  });
});
