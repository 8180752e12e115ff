import { describe, expect, it } from 'vitest';
import { createTenant, PASSWORD, signupMember } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

/**
 * The hosted pages' refresh-token transport (docs/decisions.md "Web front end"): on `/trpc` with
 * `x-refresh-transport: cookie` the refresh token lives in an HttpOnly SameSite=Strict cookie on
 * `/trpc`, never in a body; the REST API keeps returning it in the body.
 */
const suite = useTestServer();

interface TrpcAnswer {
  status: number;
  body: { result?: { data: Record<string, unknown> }; error?: { data: { code: string; details: Record<string, unknown> } } };
  setCookie: string[];
}

async function trpcCall(path: string, input: unknown, headers: Record<string, string> = {}): Promise<TrpcAnswer> {
  const res = await fetch(`${suite.server.url}/trpc/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie', ...headers },
    body: JSON.stringify(input),
  });
  return { status: res.status, body: (await res.json()) as TrpcAnswer['body'], setCookie: res.headers.getSetCookie() };
}

/** `name=value` of the workspace's refresh cookie from Set-Cookie headers. */
function refreshCookie(answer: TrpcAnswer, slug: string): string {
  const header = answer.setCookie.find((c) => c.startsWith(`refresh_${slug}=`));
  expect(header, JSON.stringify(answer.setCookie)).toBeDefined();
  return header!.split(';')[0]!;
}

describe('browser session cookie on /trpc', () => {
  it('sign-in puts the refresh token in an HttpOnly SameSite=Strict cookie on /trpc and leaves it out of the body', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const login = await trpcCall('auth.login', { tenantSlug: tenant.slug, email: member.email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.result!.data.accessToken).toEqual(expect.any(String));
    expect(login.body.result!.data).not.toHaveProperty('refreshToken');
    const header = login.setCookie.find((c) => c.startsWith(`refresh_${tenant.slug}=`))!;
    expect(header).toMatch(/; HttpOnly/i);
    expect(header).toMatch(/; SameSite=Strict/i);
    expect(header).toMatch(/; Path=\/trpc(;|$)/);
    expect(header).not.toMatch(/; Secure/i); // plain http here; Secure when the request is https
  });

  it('browser.refresh rotates the cookie; a replayed cookie is refused and ends the session family', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const login = await trpcCall('auth.login', { tenantSlug: tenant.slug, email: member.email, password: PASSWORD });
    const first = refreshCookie(login, tenant.slug);

    const rotated = await trpcCall('browser.refresh', { tenantSlug: tenant.slug }, { cookie: first });
    expect(rotated.status).toBe(200);
    expect(rotated.body.result!.data).not.toHaveProperty('refreshToken');
    const second = refreshCookie(rotated, tenant.slug);
    expect(second).not.toBe(first);
    const me = await suite.api.get(`/v1/${tenant.slug}/me`, { token: rotated.body.result!.data.accessToken as string });
    expect(me.status).toBe(200);

    const replay = await trpcCall('browser.refresh', { tenantSlug: tenant.slug }, { cookie: first });
    expect(replay.status).toBe(401);
    expect(replay.setCookie.some((c) => c.startsWith(`refresh_${tenant.slug}=;`))).toBe(true); // cleared
    const afterReplay = await trpcCall('browser.refresh', { tenantSlug: tenant.slug }, { cookie: second });
    expect(afterReplay.status).toBe(401);
  });

  it('browser.refresh without the cookie, or with another workspace\'s cookie, is 401', async () => {
    const tenant = await createTenant(suite.api);
    const other = await createTenant(suite.api);
    const none = await trpcCall('browser.refresh', { tenantSlug: tenant.slug });
    expect(none.status).toBe(401);
    expect(none.body.error!.data.details.reason).toBe('refresh_cookie_missing');
    // the other workspace's refresh token under this workspace's cookie name
    const foreign = await trpcCall('browser.refresh', { tenantSlug: tenant.slug }, { cookie: `refresh_${tenant.slug}=${other.refreshToken}` });
    expect(foreign.status).toBe(401);
  });

  it('every sign-in path of the pages (workspace creation, sign-up) hands a cookie that browser.refresh accepts', async () => {
    const created = await trpcCall('tenants.create', { tenant: { name: `Cookie ${Date.now()}` }, admin: { email: `owner-${Date.now()}@example.com`, password: PASSWORD } });
    const slug = created.body.result!.data.tenantSlug as string;
    expect((await trpcCall('browser.refresh', { tenantSlug: slug }, { cookie: refreshCookie(created, slug) })).status).toBe(200);
    const signup = await trpcCall('auth.signup', { tenantSlug: slug, email: `new-${Date.now()}@example.com`, password: PASSWORD });
    expect(signup.status).toBe(200);
    const refreshed = await trpcCall('browser.refresh', { tenantSlug: slug }, { cookie: refreshCookie(signup, slug) });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
  });

  it('browser.logout ends the cookie\'s session and clears the cookie', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const login = await trpcCall('auth.login', { tenantSlug: tenant.slug, email: member.email, password: PASSWORD });
    const cookie = refreshCookie(login, tenant.slug);
    const out = await trpcCall('browser.logout', { tenantSlug: tenant.slug }, { cookie });
    expect(out.status).toBe(200);
    expect(out.setCookie.some((c) => c.startsWith(`refresh_${tenant.slug}=;`))).toBe(true);
    expect((await trpcCall('browser.refresh', { tenantSlug: tenant.slug }, { cookie })).status).toBe(401);
  });

  it('browser.refresh and browser.logout without x-refresh-transport are refused and never put the cookie\'s token in a body', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const login = await trpcCall('auth.login', { tenantSlug: tenant.slug, email: member.email, password: PASSWORD });
    const cookie = refreshCookie(login, tenant.slug);
    const refreshToken = cookie.split('=')[1]!;
    const noHeader = { 'x-refresh-transport': '' };
    const refresh = await trpcCall('browser.refresh', { tenantSlug: tenant.slug }, { cookie, ...noHeader });
    expect(refresh.status, JSON.stringify(refresh.body)).toBe(400);
    expect(refresh.body.error!.data.details.reason).toBe('cookie_transport_required');
    expect(JSON.stringify(refresh.body)).not.toContain(refreshToken);
    expect(refresh.setCookie).toEqual([]);
    const logout = await trpcCall('browser.logout', { tenantSlug: tenant.slug }, { cookie, ...noHeader });
    expect(logout.status, JSON.stringify(logout.body)).toBe(400);
    expect(logout.body.error!.data.details.reason).toBe('cookie_transport_required');
    // the session is untouched: with the header the cookie still refreshes
    const rotated = await trpcCall('browser.refresh', { tenantSlug: tenant.slug }, { cookie });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(JSON.stringify(rotated.body)).not.toContain(refreshCookie(rotated, tenant.slug).split('=')[1]!);
  });

  it('REST keeps the refresh token in the body and sets no cookie, even with the header', async () => {
    const tenant = await createTenant(suite.api);
    const member = await signupMember(suite.api, tenant.slug);
    const res = await fetch(`${suite.server.url}/v1/${tenant.slug}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie' },
      body: JSON.stringify({ email: member.email, password: PASSWORD }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { refreshToken?: string }).refreshToken).toEqual(expect.any(String));
    expect(res.headers.getSetCookie()).toEqual([]);
    // and /trpc without the header behaves like REST
    const plain = await fetch(`${suite.server.url}/trpc/auth.login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tenantSlug: tenant.slug, email: member.email, password: PASSWORD }),
    });
    expect(((await plain.json()) as { result: { data: { refreshToken?: string } } }).result.data.refreshToken).toEqual(expect.any(String));
    expect(plain.headers.getSetCookie()).toEqual([]);
  });
});
