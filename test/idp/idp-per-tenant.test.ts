import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, createTenant, expectError, signupMember, unique, type ApiResponse, type TestTenant } from '../helpers/api.js';
import { freePort, startOpenIdProviders, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { providerFetch } from '../../src/services/idp/idp-outbound.js';
import { ForbiddenTargetError, guardedLookup, isPublicAddress } from '../../src/services/webhooks/webhook-target.js';

/** This machine's name when it resolves (e.g. through /etc/hosts) to non-public addresses only: a DNS-rebinding stand-in. */
const privateName = await lookup(hostname(), { all: true })
  .then((addresses) => (addresses.length > 0 && addresses.every((a) => !isPublicAddress(a.address)) ? hostname() : undefined))
  .catch(() => undefined);

/**
 * Each tenant its own OpenID provider (docs/idp.md "A provider per tenant"): three independent
 * oidc-provider instances on 127.0.0.1 — the deployment default (`IDP_ISSUER`) and two customers'.
 */
let defaultProvider: TestOpenIdProvider;
let provider1: TestOpenIdProvider;
let provider2: TestOpenIdProvider;
let server: TestServer;
let api: Api;
/** A server that answers discovery with a document naming another issuer. */
let liar: Server;
let liarIssuer: string;
const seen: ApiResponse[] = [];
const secretsUsed = new Set<string>();

beforeAll(async () => {
  const providers = await startOpenIdProviders(3);
  [defaultProvider, provider1, provider2] = [providers[0]!, providers[1]!, providers[2]!];
  const port = await freePort();
  server = await startTestServer({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    IDP_ISSUER: defaultProvider.issuer,
    IDP_ALLOW_PRIVATE_ISSUERS: 'true',
  });
  api = new Api(server.url);
  liar = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({
      issuer: provider1.issuer,
      authorization_endpoint: `${provider1.issuer}/auth`,
      token_endpoint: `${provider1.issuer}/token`,
      jwks_uri: `${provider1.issuer}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    }));
  });
  await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', () => resolve()));
  liarIssuer = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server?.close();
  await Promise.all([defaultProvider, provider1, provider2].map((p) => p?.close()));
  await new Promise<void>((resolve) => (liar ? liar.close(() => resolve()) : resolve()));
});

async function record<T extends ApiResponse>(res: Promise<T>): Promise<T> {
  const r = await res;
  seen.push(r);
  return r;
}

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return (server.services.orm.em.fork() as EntityManager).execute(query, params) as Promise<T[]>;
}

type ProviderTenant = TestTenant & { clientId: string; clientSecret: string };

/** Registers a client for `tenant` at `provider` and gives it to the tenant with `extra` settings. */
async function configure(tenant: TestTenant, provider: TestOpenIdProvider, extra: Record<string, unknown> = {}): Promise<ApiResponse> {
  const clientId = `client-${unique()}`;
  const clientSecret = `secret-${unique()}-${unique()}-${unique()}`;
  secretsUsed.add(clientSecret);
  await provider.addClient(clientId, clientSecret, `${server.url}/v1/${tenant.slug}/oauth/idp/callback`);
  Object.assign(tenant, { clientId, clientSecret });
  return record(api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId, clientSecret, ...extra }, { token: tenant.accessToken }));
}

async function providerTenant(provider: TestOpenIdProvider, extra: Record<string, unknown> = { issuer: provider.issuer }): Promise<ProviderTenant> {
  const tenant = await createTenant(api, `Sso ${unique()}`);
  const put = await configure(tenant, provider, extra);
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return tenant as ProviderTenant;
}

async function startUrl(slug: string): Promise<string> {
  const res = await record(api.get(`/v1/${slug}/oauth/idp/start`));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.authorizationUrl as string;
}

function followCallback(callback: URL): Promise<ApiResponse> {
  return record(api.get(callback.pathname + callback.search));
}

function account(provider: TestOpenIdProvider, email = `sso-${unique()}@example.com`, sub = `sub-${unique()}`): { sub: string; email: string } {
  provider.setAccount(sub, { email, email_verified: true });
  return { sub, email };
}

async function signIn(slug: string, provider: TestOpenIdProvider, sub: string): Promise<ApiResponse> {
  return followCallback(await provider.signIn(await startUrl(slug), sub));
}

async function tenantView(tenant: TestTenant): Promise<Record<string, unknown>> {
  const res = await record(api.get(`/v1/${tenant.slug}/tenant`, { token: tenant.accessToken }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const tokenCalls = (provider: TestOpenIdProvider) => provider.requests.filter((p) => p === '/token').length;

describe('each tenant its own OpenID provider', () => {
  it('sends each tenant to its own provider only, and creates its users in that tenant only', async () => {
    const a = await providerTenant(provider1);
    const b = await providerTenant(provider2);
    const urlA = new URL(await startUrl(a.slug));
    const urlB = new URL(await startUrl(b.slug));
    expect(urlA.origin).toBe(provider1.issuer);
    expect(urlB.origin).toBe(provider2.issuer);
    expect(urlA.searchParams.get('client_id')).toBe(a.clientId);

    // The same subject at both providers is two different people.
    const sub = `shared-sub-${unique()}`;
    const alice = account(provider1, `alice-${unique()}@one.example`, sub);
    const bob = account(provider2, `bob-${unique()}@two.example`, sub);
    const [tokens1, tokens2] = [tokenCalls(provider1), tokenCalls(provider2)];
    const inA = await signIn(a.slug, provider1, alice.sub);
    expect(inA.status, JSON.stringify(inA.body)).toBe(200);
    expect(inA.body.user.email).toBe(alice.email);
    expect([tokenCalls(provider1), tokenCalls(provider2)]).toEqual([tokens1 + 1, tokens2]);
    const inB = await signIn(b.slug, provider2, bob.sub);
    expect(inB.status, JSON.stringify(inB.body)).toBe(200);
    expect(inB.body.user.email).toBe(bob.email);
    expect([tokenCalls(provider1), tokenCalls(provider2)]).toEqual([tokens1 + 1, tokens2 + 1]);

    const users = await sql<{ tenant_id: string; email: string }>('select tenant_id, email from app_user where email in (?, ?)', [alice.email, bob.email]);
    expect(users.map((u) => [u.tenant_id, u.email]).sort()).toEqual([[a.id, alice.email], [b.id, bob.email]].sort());
    const links = await sql<{ tenant_id: string; issuer: string; subject: string }>(
      'select tenant_id, issuer, subject from idp_identity where subject = ? order by issuer', [sub],
    );
    expect(links.map((l) => [l.tenant_id, l.issuer])).toEqual([[a.id, provider1.issuer], [b.id, provider2.issuer]].sort((x, y) => x[1]!.localeCompare(y[1]!)));
    const login = await sql<{ details: { issuer: string } }>(`select details from audit_event where tenant_id = ? and action = 'UserLogin' and actor_id = ?`, [a.id, inA.body.user.id]);
    expect(login[0]!.details.issuer).toBe(provider1.issuer);

    // The session works in its own tenant and not in the other.
    expect((await api.get(`/v1/${a.slug}/me`, { token: inA.body.accessToken })).status).toBe(200);
    expect((await api.get(`/v1/${b.slug}/me`, { token: inA.body.accessToken })).status).toBe(401);
  });

  it('keys provider links by issuer: the same sub at a new provider is not the old provider\'s user', async () => {
    const tenant = await providerTenant(provider1);
    const sub = `moved-${unique()}`;
    const first = account(provider1, `first-${unique()}@example.com`, sub);
    const one = await signIn(tenant.slug, provider1, first.sub);
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    const inFlight = await startUrl(tenant.slug);
    expect((await configure(tenant, provider2, { issuer: provider2.issuer })).status).toBe(200);
    // A sign-in started against the previous provider cannot complete against the new one.
    expectError(await followCallback(await provider1.signIn(inFlight, first.sub)), 400, 'BAD_REQUEST', 'invalid_state');
    const other = account(provider2, `other-${unique()}@example.com`, sub);
    const two = await signIn(tenant.slug, provider2, other.sub);
    expect(two.status, JSON.stringify(two.body)).toBe(200);
    expect(two.body.user.id).not.toBe(one.body.user.id);
    expect(two.body.user.email).toBe(other.email);
  });

  it('refuses provider 2\'s authorization response presented to a tenant on provider 1', async () => {
    const a = await providerTenant(provider1);
    const b = await providerTenant(provider2);
    // Provider 2 also knows tenant A's client (same id, secret and redirect URI): the worst case.
    await provider2.addClient(a.clientId, a.clientSecret, `${server.url}/v1/${a.slug}/oauth/idp/callback`);
    const victim = account(provider2);

    // A's authorization request, answered by provider 2 instead of provider 1 (mix-up attack).
    const sent = new URL(await startUrl(a.slug));
    const mixedUp = await provider2.signIn(`${provider2.issuer}${sent.pathname}${sent.search}`, victim.sub);
    expect(mixedUp.searchParams.get('iss')).toBe(provider2.issuer);
    expectError(await followCallback(mixedUp), 401, 'UNAUTHORIZED', 'issuer_mismatch');

    // The same without the RFC 9207 iss parameter: provider 1 does not know provider 2's code.
    const sentAgain = new URL(await startUrl(a.slug));
    const stripped = await provider2.signIn(`${provider2.issuer}${sentAgain.pathname}${sentAgain.search}`, victim.sub);
    stripped.searchParams.delete('iss');
    const res = await followCallback(stripped);
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(['issuer_mismatch', 'code_exchange_failed', 'id_token_invalid']).toContain(res.body.details.reason);

    // Tenant B's genuine callback replayed at tenant A: its state is not A's.
    const genuine = await provider2.signIn(await startUrl(b.slug), victim.sub);
    const replay = new URL(genuine.href.replace(`/v1/${b.slug}/`, `/v1/${a.slug}/`));
    expectError(await followCallback(replay), 400, 'BAD_REQUEST', 'invalid_state');
    expect(await sql('select id from app_user where tenant_id = ? and email = ?', [a.id, victim.email])).toEqual([]);
  });

  it('checks discovery when saved: 400 with the reason and nothing changed', async () => {
    const tenant = await providerTenant(provider1);
    const before = await tenantView(tenant);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const token = { token: tenant.accessToken };
    const body = { clientId: `c-${unique()}`, clientSecret: `s-${unique()}-${unique()}` };
    secretsUsed.add(body.clientSecret);
    expectError(await record(api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, issuer: closed }, token)), 400, 'BAD_REQUEST', 'idp_discovery_failed');
    expectError(await record(api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, issuer: liarIssuer }, token)), 400, 'BAD_REQUEST', 'issuer_mismatch');
    for (const issuer of ['ftp://idp.example', 'https://user:pw@idp.example', 'https://idp.example/?tenant=1', 'https://idp.example/#x', 'http://idp.example', 'not a url', `${provider1.issuer}/.well-known/openid-configuration`]) {
      expectError(await record(api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, issuer }, token)), 400, 'BAD_REQUEST', 'invalid_issuer');
    }
    expect(await tenantView(tenant)).toEqual(before);
    expect(new URL(await startUrl(tenant.slug)).origin).toBe(provider1.issuer);
  });

  it('uses the deployment IDP_ISSUER when no issuer is given, and shows issuer, domains and redirect URI but never the secret', async () => {
    const tenant = await providerTenant(defaultProvider, {});
    const view = await tenantView(tenant);
    expect(view).toMatchObject({
      idpOauthEnabled: true,
      idpClientId: tenant.clientId,
      hasIdpClientSecret: true,
      idpIssuer: defaultProvider.issuer,
      idpIssuerIsDefault: true,
      idpAllowedEmailDomains: [],
      idpRedirectUri: `${server.url}/v1/${tenant.slug}/oauth/idp/callback`,
    });
    const sent = new URL(await startUrl(tenant.slug));
    expect(sent.origin).toBe(defaultProvider.issuer);
    expect(sent.searchParams.get('redirect_uri')).toBe(view.idpRedirectUri);
    const person = account(defaultProvider);
    expect((await signIn(tenant.slug, defaultProvider, person.sub)).status).toBe(200);

    // Its own provider, then back to the default.
    expect((await configure(tenant, provider2, { issuer: provider2.issuer })).status).toBe(200);
    expect(await tenantView(tenant)).toMatchObject({ idpIssuer: provider2.issuer, idpIssuerIsDefault: false, idpRedirectUri: view.idpRedirectUri });
    expect(new URL(await startUrl(tenant.slug)).origin).toBe(provider2.issuer);
    expect((await configure(tenant, defaultProvider)).status).toBe(200);
    expect(await tenantView(tenant)).toMatchObject({ idpIssuer: defaultProvider.issuer, idpIssuerIsDefault: true });
  });

  it('refuses a sign-in from another email domain when domains are set (401, audited), and accepts the listed ones', async () => {
    const tenant = await providerTenant(provider1, { issuer: provider1.issuer, allowedEmailDomains: ['Corp.Example', 'corp.example', 'eu.corp.example'] });
    expect((await tenantView(tenant)).idpAllowedEmailDomains).toEqual(['corp.example', 'eu.corp.example']);

    const insider = account(provider1, `Worker-${unique()}@CORP.example`);
    const ok = await signIn(tenant.slug, provider1, insider.sub);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await signIn(tenant.slug, provider1, account(provider1, `w-${unique()}@eu.corp.example`).sub)).status).toBe(200);

    for (const email of [`out-${unique()}@other.example`, `sub-${unique()}@dev.corp.example`, `x-${unique()}@corp.example.evil.test`]) {
      const outsider = account(provider1, email);
      expectError(await signIn(tenant.slug, provider1, outsider.sub), 401, 'UNAUTHORIZED', 'idp_email_domain_not_allowed');
      expect(await sql('select id from app_user where tenant_id = ? and email = ?', [tenant.id, email])).toEqual([]);
    }
    const unverified = `sub-${unique()}`;
    provider1.setAccount(unverified, { email: `u-${unique()}@corp.example`, email_verified: false });
    expectError(await signIn(tenant.slug, provider1, unverified), 401, 'UNAUTHORIZED', 'idp_email_domain_not_allowed');

    // A user already linked is refused too once the domains no longer include theirs.
    expect((await configure(tenant, provider1, { issuer: provider1.issuer, allowedEmailDomains: ['elsewhere.example'] })).status).toBe(200);
    expectError(await signIn(tenant.slug, provider1, insider.sub), 401, 'UNAUTHORIZED', 'idp_email_domain_not_allowed');

    const failures = await sql<{ details: Record<string, unknown> }>(
      `select details from audit_event where tenant_id = ? and action = 'UserLoginFailed' order by created_at`, [tenant.id],
    );
    expect(failures).toHaveLength(5);
    expect(failures[0]!.details).toMatchObject({ method: 'idp', reason: 'idp_email_domain_not_allowed', issuer: provider1.issuer, emailDomain: 'other.example' });

    const token = { token: tenant.accessToken };
    const body = { clientId: 'c', clientSecret: 's' };
    expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, allowedEmailDomains: ['not a domain'] }, token), 400, 'BAD_REQUEST', 'validation_failed');
    expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, allowedEmailDomains: ['@corp.example'] }, token), 400, 'BAD_REQUEST', 'validation_failed');
    const tooMany = Array.from({ length: 51 }, (_, i) => `d${i}.example`);
    expectError(await api.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, allowedEmailDomains: tooMany }, token), 400, 'BAD_REQUEST', 'validation_failed');
  });

  it('lets only an admin of the tenant itself change it: a Member gets 403, another tenant\'s admin is refused', async () => {
    const a = await providerTenant(provider1);
    const b = await providerTenant(provider2);
    const before = await tenantView(a);
    const body = { clientId: `evil-${unique()}`, clientSecret: `evil-${unique()}-secret`, issuer: provider2.issuer };
    const member = await signupMember(api, a.slug);
    expectError(await api.put(`/v1/${a.slug}/oauth/idp/credentials`, body, { token: member.accessToken }), 403, 'FORBIDDEN', 'admin_required');
    const foreign = await api.put(`/v1/${a.slug}/oauth/idp/credentials`, body, { token: b.accessToken });
    expect(foreign.status, JSON.stringify(foreign.body)).toBe(401);
    expect(foreign.body.details.reason).toBe('tenant_mismatch');
    expect((await api.get(`/v1/${a.slug}/tenant`, { token: b.accessToken })).status).toBe(401);
    expect(await tenantView(a)).toEqual(before);
    expect(new URL(await startUrl(a.slug)).origin).toBe(provider1.issuer);
  });

  it('never returns or logs a client secret, and stores it only encrypted', async () => {
    expect(seen.length).toBeGreaterThan(20);
    expect(secretsUsed.size).toBeGreaterThan(5);
    const everything = JSON.stringify(seen.map((r) => r.body)) + server.logs.join('\n');
    for (const secret of secretsUsed) expect(everything).not.toContain(secret);
    const rows = await sql<{ idp_client_secret_enc: string }>('select idp_client_secret_enc from tenant where idp_client_secret_enc is not null');
    for (const row of rows) for (const secret of secretsUsed) expect(row.idp_client_secret_enc).not.toContain(secret);
  });
});

describe('tenant issuers on private addresses (IDP_ALLOW_PRIVATE_ISSUERS unset)', () => {
  let strict: TestServer;
  let strictApi: Api;
  beforeAll(async () => {
    strict = await startTestServer({ IDP_ISSUER: defaultProvider.issuer });
    strictApi = new Api(strict.url);
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('refuses loopback, private and link-local issuers before any request, and keeps the deployment default usable', async () => {
    const tenant = await createTenant(strictApi, `Strict ${unique()}`);
    const token = { token: tenant.accessToken };
    const body = { clientId: `c-${unique()}`, clientSecret: `s-${unique()}-${unique()}` };
    const before = provider1.requests.length;
    for (const issuer of [provider1.issuer, 'https://127.0.0.1', 'https://localhost:8443', 'https://10.1.2.3', 'https://169.254.169.254', 'https://[::1]', 'https://[::ffff:10.0.0.1]', 'https://192.168.0.1/realms/x']) {
      expectError(await strictApi.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, issuer }, token), 400, 'BAD_REQUEST', 'idp_issuer_not_allowed');
    }
    expect(provider1.requests.length).toBe(before);
    // The operator's own IDP_ISSUER (loopback here) stays allowed, named or not.
    expect((await strictApi.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, issuer: defaultProvider.issuer }, token)).status).toBe(200);
    expect((await strictApi.put(`/v1/${tenant.slug}/oauth/idp/credentials`, body, token)).status).toBe(200);
  });

  it.runIf(privateName !== undefined)('refuses a host name that resolves to a private address, when discovery connects', async () => {
    const tenant = await createTenant(strictApi, `Strict ${unique()}`);
    const before = provider1.requests.length;
    const issuer = `https://${privateName}:${new URL(provider1.issuer).port}`;
    const res = await strictApi.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { clientId: 'c', clientSecret: 's', issuer }, { token: tenant.accessToken });
    expectError(res, 400, 'BAD_REQUEST', 'idp_issuer_not_allowed');
    expect(provider1.requests.length).toBe(before);
  });

  it('answers a name that does not resolve exactly as one that resolves to a private address (no internal-DNS oracle)', async () => {
    const tenant = await createTenant(strictApi, `Strict ${unique()}`);
    const body = { clientId: 'c', clientSecret: 's' };
    const port = new URL(provider1.issuer).port;
    const unresolvable = await strictApi.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, issuer: `https://no-such-host-${unique()}.invalid:${port}` }, { token: tenant.accessToken });
    expectError(unresolvable, 400, 'BAD_REQUEST', 'idp_issuer_not_allowed');
    expect(unresolvable.body.message).toBe('The issuer does not resolve to a public address');
    if (privateName !== undefined) {
      const internal = await strictApi.put(`/v1/${tenant.slug}/oauth/idp/credentials`, { ...body, issuer: `https://${privateName}:${port}` }, { token: tenant.accessToken });
      expect(internal.status).toBe(400);
      expect(internal.body).toEqual(unresolvable.body);
    }
    // the webhook delivery log stores the same words for both, with no resolver detail
    const lookupError = (host: string) => new Promise<Error>((resolve) => guardedLookup(false)(host, {}, (err) => resolve(err as Error)));
    const missing = await lookupError('no-such-host.invalid');
    expect(missing).toBeInstanceOf(ForbiddenTargetError);
    expect(missing.message).toBe('target no-such-host.invalid does not resolve to a public address');
    expect(missing.message).not.toMatch(/ENOTFOUND|EAI_|getaddrinfo/);
    if (privateName !== undefined) expect((await lookupError(privateName)).message).toBe(`target ${privateName} does not resolve to a public address`);
  });

  it('checks the address a host name resolves to at connection time, for every provider request', async () => {
    const fetchGuarded = providerFetch(false);
    const init = { method: 'GET', headers: {}, body: undefined, redirect: 'manual' as const, signal: AbortSignal.timeout(5000) };
    await expect(fetchGuarded(`${provider1.issuer}/.well-known/openid-configuration`, init)).rejects.toBeInstanceOf(ForbiddenTargetError);
    const port = new URL(provider1.issuer).port;
    await expect(fetchGuarded(`http://localhost:${port}/.well-known/openid-configuration`, init)).rejects.toBeInstanceOf(ForbiddenTargetError);
    // The same fetch, allowed, answers like fetch does.
    const res = await providerFetch(true)(`${provider1.issuer}/.well-known/openid-configuration`, init);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { issuer: string }).issuer).toBe(provider1.issuer);
  });
});
