import type { RawRequest, RequestSpec } from 'autocannon';
import * as oidc from 'openid-client';
import * as OTPAuth from 'otpauth';
import { mapConcurrent, type JsonClient } from './client.js';
import type { Seeder } from './database.js';
import type { BenchOptions, BetterAuthScenarioName, ScenarioName } from './options.js';

/** The password of every seeded and created bench account. */
export const BENCH_PASSWORD = 'correct horse battery staple';

/** Which limit a scenario is compared with (`none`: another product's sign-in, whose hash is not argon2id). */
export type CeilingKind = 'argon2' | 'http' | 'none';

/** A scenario ready to be loaded, or the reason it cannot run in this build. */
export type Prepared =
  | {
      kind: 'ready';
      requests: RequestSpec[];
      connections: number;
      amount?: number;
      /** Load run at the same time but not reported (e.g. logins while `me` is measured). */
      background?: { requests: RequestSpec[]; connections: number };
      /** Called after the load: why answers counted as successful (2xx) were not, or undefined. */
      verify?: () => string | undefined;
    }
  | { kind: 'skipped'; reason: string };

/** One scenario: the service's own (`ScenarioName`) or, with `--compare`, another product's. */
export interface Scenario<Name extends ScenarioName | BetterAuthScenarioName = ScenarioName> {
  name: Name;
  ceiling: CeilingKind;
  /** What one request does, for the report. */
  description: string;
  prepare(): Promise<Prepared>;
}

interface BenchTenant {
  slug: string;
  id: string;
  adminId: string;
  adminToken: string;
  /** The admin session's refresh token: the proof of the session that finishing a provider sign-in needs (docs/oidc.md "Sessions end everywhere"). */
  adminRefreshToken: string;
}

interface SignedIn {
  accessToken: string;
  refreshToken: string;
}

const ROUTE_MISSING = 'skipped: route not available';
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Everything the scenarios share: the tenants, the seeded data and a few signed-in sessions. */
export class BenchFixture {
  private tenants = new Map<string, BenchTenant>();

  constructor(
    readonly api: JsonClient,
    readonly seeder: Seeder,
    readonly options: BenchOptions,
    /** argon2id PHC hash of {@link BENCH_PASSWORD} at the service's parameters. */
    readonly passwordHash: string,
    readonly log: (line: string) => void,
  ) {}

  /** Creates (once) a tenant through POST /v1/tenants; its admin's token is kept. */
  async tenant(name: string): Promise<BenchTenant> {
    const existing = this.tenants.get(name);
    if (existing) return existing;
    const body = await this.api.expectOk('POST', '/v1/tenants', {
      tenant: { name },
      admin: { email: `admin@${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.bench.test`, password: BENCH_PASSWORD },
    });
    const slug = body.tenantSlug as string;
    const tenant = {
      slug, id: await this.seeder.tenantIdOf(slug), adminId: body.user.id as string, adminToken: body.accessToken as string, adminRefreshToken: body.refreshToken as string,
    };
    this.tenants.set(name, tenant);
    return tenant;
  }

  /** Tenants whose audit events are seeded already (scenarios share tenants). */
  readonly auditSeeded = new Set<string>();

  private usersTenantReady: Promise<BenchTenant> | undefined;

  /** The tenant with `options.users` seeded Members `user<n>@bench.test`. */
  usersTenant(): Promise<BenchTenant> {
    this.usersTenantReady ??= (async () => {
      const tenant = await this.tenant('Bench Users');
      this.log(`seeding ${this.options.users} users`);
      await this.seeder.seedUsers(tenant.id, 'user', this.options.users, this.passwordHash);
      return tenant;
    })();
    return this.usersTenantReady;
  }

  private sessionsReady: Promise<SignedIn[]> | undefined;

  /** One signed-in session per connection (plus spares) of distinct seeded users. */
  sessions(): Promise<SignedIn[]> {
    this.sessionsReady ??= (async () => {
      const tenant = await this.usersTenant();
      const count = this.options.connections + 16;
      this.log(`signing in ${count} users`);
      return mapConcurrent(Array.from({ length: count }, (_, i) => i + 1), 8, async (n) => {
        const body = await this.api.expectOk('POST', `/v1/${tenant.slug}/auth/login`, { email: `user${n}@bench.test`, password: BENCH_PASSWORD });
        return { accessToken: body.accessToken as string, refreshToken: body.refreshToken as string };
      });
    })();
    return this.sessionsReady;
  }
}

/** 404 from a probe of a route that needs a live tenant means the route is not in this build. */
async function probe(api: JsonClient, method: string, path: string, body: unknown, token: string): Promise<Prepared | undefined> {
  const res = await api.request(method, path, body, token);
  if (res.status === 404) return { kind: 'skipped', reason: ROUTE_MISSING };
  if (res.status !== 200) return { kind: 'skipped', reason: `skipped: probe ${method} ${path} answered ${res.status} ${JSON.stringify(res.body).slice(0, 200)}` };
  return undefined;
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** A GET with a bearer token, the tokens taken round-robin from `tokens`. */
function authenticatedGet(path: string, tokens: string[]): RequestSpec[] {
  let next = 0;
  return [
    {
      method: 'GET',
      path,
      setupRequest(req: RawRequest) {
        return { ...req, headers: bearer(tokens[next++ % tokens.length]!) };
      },
    },
  ];
}

/**
 * GET users searches of the seeded tenant, one term per request: a whole address (one match), a
 * number prefix (a few hundred) and the domain (every user, the first page of 50).
 */
function userSearches(slug: string, token: string, users: number): RequestSpec[] {
  const terms = [() => `user${1 + Math.floor(Math.random() * users)}@`, () => `user${1 + Math.floor(Math.random() * 900)}`, () => 'bench.test'];
  let next = 0;
  return [
    {
      method: 'GET',
      path: `/v1/${slug}/users`,
      setupRequest(req: RawRequest) {
        const term = terms[next++ % terms.length]!();
        return { ...req, path: `/v1/${slug}/users?search=${encodeURIComponent(term)}&limit=50`, headers: bearer(token) };
      },
    },
  ];
}

/** POST auth/login of random seeded users `user<n>@bench.test` with their password. */
function passwordLogins(slug: string, users: number): RequestSpec[] {
  return [
    {
      method: 'POST',
      path: `/v1/${slug}/auth/login`,
      setupRequest(req: RawRequest) {
        const n = 1 + Math.floor(Math.random() * users);
        return { ...req, headers: JSON_HEADERS, body: JSON.stringify({ email: `user${n}@bench.test`, password: BENCH_PASSWORD }) };
      },
    },
  ];
}

/** The scenarios of the issue, in `options.scenarios` order. */
export function buildScenarios(fx: BenchFixture, argon2HashesPerSecond: () => number): Scenario[] {
  const { options, api } = fx;
  const all: Scenario[] = [
    {
      name: 'health',
      ceiling: 'http',
      description: 'GET /health: the service\'s HTTP stack alone (Express, headers, request log), no tRPC, no database; the floor of every route',
      async prepare() {
        return { kind: 'ready', connections: options.connections, requests: [{ method: 'GET', path: '/health' }] };
      },
    },
    {
      name: 'me-trpc',
      ceiling: 'http',
      description: 'GET /trpc/me.get: the `me` procedure through the tRPC endpoint, without the REST façade (compare with `me`)',
      async prepare() {
        const tenant = await fx.usersTenant();
        const sessions = await fx.sessions();
        const input = encodeURIComponent(JSON.stringify({ tenantSlug: tenant.slug }));
        return { kind: 'ready', connections: options.connections, requests: authenticatedGet(`/trpc/me.get?input=${input}`, sessions.map((s) => s.accessToken)) };
      },
    },
    {
      name: 'me',
      ceiling: 'http',
      description: 'GET /v1/{slug}/me with a user access token (tenant, session and user checked per request)',
      async prepare() {
        const tenant = await fx.usersTenant();
        const sessions = await fx.sessions();
        return { kind: 'ready', connections: options.connections, requests: authenticatedGet(`/v1/${tenant.slug}/me`, sessions.map((s) => s.accessToken)) };
      },
    },
    {
      name: 'refresh',
      ceiling: 'http',
      description: 'POST auth/refresh; each connection follows its own rotating token chain',
      async prepare() {
        const tenant = await fx.usersTenant();
        // Tokens ready to be presented. A successful refresh puts its successor back; a failed one
        // ends that chain. autocannon clears its per-connection context between requests, so the
        // chains live here. There are more chains than connections, so a connection always finds one.
        const ready = (await fx.sessions()).map((s) => s.refreshToken);
        const path = `/v1/${tenant.slug}/auth/refresh`;
        return {
          kind: 'ready',
          connections: options.connections,
          requests: [
            {
              method: 'POST',
              path,
              setupRequest(req: RawRequest) {
                const refreshToken = ready.shift() ?? 'no-chain-left';
                return { ...req, headers: JSON_HEADERS, body: JSON.stringify({ refreshToken }) };
              },
              onResponse(status: number, body: string) {
                if (status === 200) ready.push((JSON.parse(body) as { refreshToken: string }).refreshToken);
              },
            },
          ],
        };
      },
    },
    {
      name: 'users-list',
      ceiling: 'http',
      description: `GET /v1/{slug}/users as an admin, tenant of ${options.users} users`,
      async prepare() {
        const tenant = await fx.usersTenant();
        const path = `/v1/${tenant.slug}/users`;
        const missing = await probe(api, 'GET', path, undefined, tenant.adminToken);
        if (missing) return missing;
        return { kind: 'ready', connections: options.connections, requests: authenticatedGet(path, [tenant.adminToken]) };
      },
    },
    {
      name: 'audit',
      ceiling: 'http',
      description: `GET /v1/{slug}/audit?limit=50 as an admin, tenant of ${options.auditEvents} events`,
      async prepare() {
        const tenant = await fx.tenant('Bench Audit');
        const path = `/v1/${tenant.slug}/audit?limit=50`;
        const missing = await probe(api, 'GET', path, undefined, tenant.adminToken);
        if (missing) return missing;
        await seedAudit(fx, tenant);
        return { kind: 'ready', connections: options.connections, requests: authenticatedGet(path, [tenant.adminToken]) };
      },
    },
    {
      name: 'users-search',
      ceiling: 'http',
      description: `GET /v1/{slug}/users?search=<part of an email>&limit=50 as an admin, tenant of ${options.users} users; rare and common terms`,
      async prepare() {
        const tenant = await fx.usersTenant();
        const missing = await probe(api, 'GET', `/v1/${tenant.slug}/users?search=user1&limit=50`, undefined, tenant.adminToken);
        if (missing) return missing;
        return { kind: 'ready', connections: options.connections, requests: userSearches(tenant.slug, tenant.adminToken, options.users) };
      },
    },
    {
      name: 'audit-activity',
      ceiling: 'http',
      description: `GET /v1/{slug}/audit/activity as an admin: the console's start page over ${options.users} users and ${options.auditEvents} events (4 aggregates)`,
      async prepare() {
        const tenant = await fx.usersTenant();
        const path = `/v1/${tenant.slug}/audit/activity`;
        const missing = await probe(api, 'GET', path, undefined, tenant.adminToken);
        if (missing) return missing;
        await seedAudit(fx, tenant);
        return { kind: 'ready', connections: options.connections, requests: authenticatedGet(path, [tenant.adminToken]) };
      },
    },
    {
      name: 'login',
      ceiling: 'argon2',
      description: 'POST auth/login with email and password of a random seeded user (one argon2id verification)',
      async prepare() {
        const tenant = await fx.usersTenant();
        return { kind: 'ready', connections: options.hashConnections, requests: passwordLogins(tenant.slug, options.users) };
      },
    },
    {
      name: 'me-during-login',
      ceiling: 'http',
      description: 'GET /me on 4 connections while the login scenario runs beside it: hashing must not stall other requests',
      async prepare() {
        const tenant = await fx.usersTenant();
        const sessions = await fx.sessions();
        return {
          kind: 'ready',
          connections: 4,
          requests: authenticatedGet(`/v1/${tenant.slug}/me`, sessions.map((s) => s.accessToken)),
          background: { connections: options.hashConnections, requests: passwordLogins(tenant.slug, options.users) },
        };
      },
    },
    {
      name: 'login+totp',
      ceiling: 'argon2',
      description: 'POST auth/login with password and TOTP code, tenant mfaPolicy Required; each enrolled user signs in once',
      prepare: () => prepareTotpLogin(fx, argon2HashesPerSecond()),
    },
    {
      name: 'signup',
      ceiling: 'argon2',
      description: 'POST auth/signup with a new email (one argon2id hash, user + session + audit rows)',
      async prepare() {
        const tenant = await fx.tenant('Bench Signup');
        let n = 0;
        return {
          kind: 'ready',
          connections: options.hashConnections,
          requests: [
            {
              method: 'POST',
              path: `/v1/${tenant.slug}/auth/signup`,
              setupRequest(req: RawRequest) {
                return { ...req, headers: JSON_HEADERS, body: JSON.stringify({ email: `signup${++n}@bench.test`, password: BENCH_PASSWORD }) };
              },
            },
          ],
        };
      },
    },
    {
      name: 'oidc-client-credentials',
      ceiling: 'http',
      description: 'POST /v1/{slug}/oidc/token grant_type=client_credentials (an m2m application, HTTP Basic client auth)',
      async prepare() {
        const tenant = await fx.tenant('Bench Apps');
        const created = await api.request('POST', `/v1/${tenant.slug}/applications`, { name: 'bench', type: 'm2m' }, tenant.adminToken);
        if (created.status === 404) return { kind: 'skipped', reason: ROUTE_MISSING };
        const body = created.body as { application: { clientId: string }; clientSecret: string };
        const basic = Buffer.from(`${encodeURIComponent(body.application.clientId)}:${encodeURIComponent(body.clientSecret)}`).toString('base64');
        return {
          kind: 'ready',
          connections: options.connections,
          requests: [
            {
              method: 'POST',
              path: `/v1/${tenant.slug}/oidc/token`,
              headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
              body: 'grant_type=client_credentials',
            },
          ],
        };
      },
    },
    {
      name: 'oidc-code-exchange',
      ceiling: 'http',
      description: 'POST /v1/{slug}/oidc/token grant_type=authorization_code with PKCE (a web application, HTTP Basic client auth), one fresh code each',
      prepare: () => prepareCodeExchange(fx),
    },
    {
      name: 'oidc-client-credentials-resource',
      ceiling: 'http',
      description: 'oidc-client-credentials for an API resource of 200 permissions, asking for 150, holding no role (a JWT with none): the baseline of -rbac',
      prepare: () => prepareResourceClientCredentials(fx, false),
    },
    {
      name: 'oidc-client-credentials-rbac',
      ceiling: 'http',
      description: `oidc-client-credentials-resource with the application holding ${RBAC_ROLES} roles of ${RBAC_PERMISSIONS_PER_ROLE} permissions each (a JWT with the granted ones)`,
      prepare: () => prepareResourceClientCredentials(fx, true),
    },
    {
      name: 'oidc-code-exchange-resource',
      ceiling: 'http',
      description: 'oidc-code-exchange for an API resource of 200 permissions, asking for 150, holding no role: the baseline of -rbac',
      prepare: () => prepareResourceCodeExchange(fx, false),
    },
    {
      name: 'oidc-code-exchange-rbac',
      ceiling: 'http',
      description: `oidc-code-exchange-resource with the person holding ${RBAC_ROLES} roles of ${RBAC_PERMISSIONS_PER_ROLE} permissions each (a JWT with the granted ones)`,
      prepare: () => prepareResourceCodeExchange(fx, true),
    },
  ];
  return all.filter((s) => options.scenarios.includes(s.name));
}

async function seedAudit(fx: BenchFixture, tenant: BenchTenant): Promise<void> {
  if (fx.auditSeeded.has(tenant.id)) return;
  fx.auditSeeded.add(tenant.id);
  const total = fx.options.auditEvents;
  const started = Date.now();
  await fx.seeder.seedAuditEvents(tenant.id, tenant.adminId, total, (done) => {
    if (done % 200_000 === 0 || done === total) fx.log(`seeded ${done}/${total} audit events (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  });
}

/**
 * login+totp: enough users enrolled through the API (sign in, mfa/totp/enroll, mfa/totp/verify) for
 * about one run at the argon2 ceiling, then mfaPolicy Required. A TOTP code is accepted once per user
 * and step, so each user signs in once, with the code of the next step (±1 step is accepted, and it
 * is later than the step used to verify the enrollment).
 */
async function prepareTotpLogin(fx: BenchFixture, hashesPerSecond: number): Promise<Prepared> {
  const { api, options } = fx;
  const tenant = await fx.tenant('Bench MFA');
  const policyProbe = await probe(api, 'PATCH', `/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Optional' }, tenant.adminToken);
  if (policyProbe) return policyProbe;
  const enrollProbe = await probe(api, 'POST', `/v1/${tenant.slug}/mfa/totp/enroll`, undefined, tenant.adminToken);
  if (enrollProbe) return enrollProbe;

  const count = Math.min(5000, Math.max(20, Math.ceil(hashesPerSecond * options.durationSeconds * 1.1)));
  fx.log(`enrolling TOTP for ${count} users (about ${(count / Math.max(1, hashesPerSecond)).toFixed(0)} s of hashing)`);
  await fx.seeder.seedUsers(tenant.id, 'mfa', count, fx.passwordHash);
  const secrets = await mapConcurrent(Array.from({ length: count }, (_, i) => i + 1), options.hashConnections, async (n) => {
    const email = `mfa${n}@bench.test`;
    const session = await api.expectOk('POST', `/v1/${tenant.slug}/auth/login`, { email, password: BENCH_PASSWORD });
    const enrolled = await api.expectOk('POST', `/v1/${tenant.slug}/mfa/totp/enroll`, undefined, session.accessToken);
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(enrolled.secret as string), algorithm: 'SHA1', digits: 6, period: 30 });
    await api.expectOk('POST', `/v1/${tenant.slug}/mfa/totp/verify`, { code: totp.generate() }, session.accessToken);
    return { email, totp };
  });
  await api.expectOk('PATCH', `/v1/${tenant.slug}/tenant`, { mfaPolicy: 'Required' }, tenant.adminToken);

  let next = 0;
  return {
    kind: 'ready',
    connections: options.hashConnections,
    amount: count,
    requests: [
      {
        method: 'POST',
        path: `/v1/${tenant.slug}/auth/login`,
        setupRequest(req: RawRequest) {
          const user = secrets[next++ % secrets.length]!;
          const totpCode = user.totp.generate({ timestamp: Date.now() + 30_000 });
          return { ...req, headers: JSON_HEADERS, body: JSON.stringify({ email: user.email, password: BENCH_PASSWORD, totpCode }) };
        },
      },
    ],
  };
}

/** One user agent's cookies for the provider's endpoints, without following redirects. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(pair.slice(0, eq).trim());
      else this.cookies.set(pair.slice(0, eq).trim(), value);
    }
    return res;
  }
}

/**
 * The API resource of the RBAC scenarios: RBAC_RESOURCE_PERMISSIONS permissions (an API resource's
 * most), bundled into RBAC_ROLES overlapping roles of RBAC_PERMISSIONS_PER_ROLE permissions each.
 */
const RBAC_RESOURCE = 'https://api.bench.test/invoices';
const RBAC_RESOURCE_PERMISSIONS = 200;
const RBAC_ROLES = 20;
const RBAC_PERMISSIONS_PER_ROLE = 50;

/** The permission names of role `r` (from 0): 50 in a row, each role 10 further along the resource's 200. */
function rbacPermissions(r: number): string[] {
  return Array.from({ length: RBAC_PERMISSIONS_PER_ROLE }, (_, p) => `invoices:action${(r * 10 + p) % RBAC_RESOURCE_PERMISSIONS}`);
}

/** What the RBAC scenarios ask for: every other permission of the resource and 50 the resource lacks. */
function rbacScope(): string {
  const asked: string[] = [];
  for (let i = 0; i < RBAC_RESOURCE_PERMISSIONS; i += 2) asked.push(`invoices:action${i}`);
  for (let extra = 0; extra < 50; extra++) asked.push(`unknown:action${extra}`);
  return asked.join(' ');
}

/** The RBAC resource and its RBAC_ROLES roles in `tenant` (once per tenant). @returns the role ids. */
async function seedRoles(fx: BenchFixture, tenant: BenchTenant): Promise<string[]> {
  const { api } = fx;
  const permissions = Array.from({ length: RBAC_RESOURCE_PERMISSIONS }, (_, i) => ({ name: `invoices:action${i}` }));
  await api.expectOk('POST', `/v1/${tenant.slug}/api-resources`, { name: 'Bench invoices', identifier: RBAC_RESOURCE, permissions }, tenant.adminToken);
  const roleIds: string[] = [];
  for (let r = 0; r < RBAC_ROLES; r++) {
    const body = await api.expectOk('POST', `/v1/${tenant.slug}/roles`, {
      name: `bench-role-${r}`, permissions: rbacPermissions(r).map((permission) => ({ resource: RBAC_RESOURCE, permission })),
    }, tenant.adminToken);
    roleIds.push((body.role as { id: string }).id);
  }
  return roleIds;
}

/**
 * client_credentials for RBAC_RESOURCE asking for rbacScope(): an m2m application in a tenant of its
 * own holding every seeded role (`withRoles`), or none (the baseline).
 */
async function prepareResourceClientCredentials(fx: BenchFixture, withRoles: boolean): Promise<Prepared> {
  const { api, options } = fx;
  const tenant = await fx.tenant(withRoles ? 'Bench RBAC Machines' : 'Bench Resource Machines');
  const created = await api.request('POST', `/v1/${tenant.slug}/applications`, { name: 'bench rbac', type: 'm2m' }, tenant.adminToken);
  if (created.status === 404) return { kind: 'skipped', reason: ROUTE_MISSING };
  const body = created.body as { application: { id: string; clientId: string }; clientSecret: string };
  const roleIds = await seedRoles(fx, tenant);
  if (withRoles) await api.expectOk('PUT', `/v1/${tenant.slug}/applications/${body.application.id}/roles`, { roleIds }, tenant.adminToken);
  const basic = Buffer.from(`${encodeURIComponent(body.application.clientId)}:${encodeURIComponent(body.clientSecret)}`).toString('base64');
  const form = new URLSearchParams({ grant_type: 'client_credentials', resource: RBAC_RESOURCE, scope: rbacScope() });
  return {
    kind: 'ready',
    connections: options.connections,
    requests: [
      {
        method: 'POST',
        path: `/v1/${tenant.slug}/oidc/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
        body: form.toString(),
      },
    ],
  };
}

/** The code exchange for RBAC_RESOURCE asking for rbacScope(), the signed-in admin holding every seeded role (`withRoles`) or none. */
async function prepareResourceCodeExchange(fx: BenchFixture, withRoles: boolean): Promise<Prepared> {
  const tenantName = withRoles ? 'Bench RBAC People' : 'Bench Resource People';
  const tenant = await fx.tenant(tenantName);
  const roleIds = await seedRoles(fx, tenant);
  if (withRoles) await fx.api.expectOk('PUT', `/v1/${tenant.slug}/users/${tenant.adminId}/roles`, { roleIds }, tenant.adminToken);
  return prepareCodeExchange(fx, { tenantName, resource: RBAC_RESOURCE, scope: rbacScope() });
}

/** Codes a code-exchange run spends, one per request: about 2 s of exchanges, prepared within the codes' 60 s life. */
const CODE_EXCHANGES = 1500;

/**
 * oidc-code-exchange: a `web` application, then CODE_EXCHANGES authorization-code + PKCE sign-ins of
 * the tenant admin played over HTTP (authorization request, the interaction completed with the admin's
 * hosted session, resume) up to the redirect carrying the code; the load exchanges each code once.
 */
async function prepareCodeExchange(fx: BenchFixture, rbac?: { tenantName: string; resource: string; scope: string }): Promise<Prepared> {
  const { api, options } = fx;
  const tenant = await fx.tenant(rbac?.tenantName ?? 'Bench Code Flow');
  const redirectUri = 'https://app.example.com/callback';
  const created = await api.request('POST', `/v1/${tenant.slug}/applications`, { name: 'bench web', type: 'web', redirectUris: [redirectUri] }, tenant.adminToken);
  if (created.status === 404) return { kind: 'skipped', reason: ROUTE_MISSING };
  const body = created.body as { application: { clientId: string }; clientSecret: string };
  const clientId = body.application.clientId;
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(body.clientSecret)}`).toString('base64');
  const issuer = `${api.baseUrl}/v1/${tenant.slug}/oidc`;

  const codeFor = async (): Promise<{ code: string; verifier: string }> => {
    const jar = new CookieJar();
    const verifier = oidc.randomPKCECodeVerifier();
    const query = new URLSearchParams({
      client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope: rbac ? `openid ${rbac.scope}` : 'openid', state: oidc.randomState(),
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      ...(rbac ? { resource: rbac.resource } : {}),
    });
    let next = new URL(`${issuer}/auth?${query}`);
    for (let hop = 0; hop < 12; hop++) {
      const res = await jar.request(next.href);
      const location = res.headers.get('location');
      if (!location) throw new Error(`${next.pathname} answered ${res.status}: ${await res.text()}`);
      const target = new URL(location, next);
      if (target.href.startsWith(redirectUri)) return { code: target.searchParams.get('code')!, verifier };
      if (/\/oidc\/interaction\/[^/?]+$/.test(target.pathname)) {
        await jar.request(target.href); // the hand-off to the hosted sign-in page
        const complete = await jar.request(`${target.href}/complete`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenant.adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ refreshToken: tenant.adminRefreshToken }),
        });
        const done = (await complete.json()) as { redirectTo?: string };
        if (!done.redirectTo) throw new Error(`interaction complete answered ${complete.status}: ${JSON.stringify(done)}`);
        next = new URL(done.redirectTo, target);
        continue;
      }
      next = target;
    }
    throw new Error('too many redirects in the authorization request');
  };

  const started = Date.now();
  const codes = await mapConcurrent(Array.from({ length: CODE_EXCHANGES }), Math.max(8, options.connections / 2), codeFor);
  fx.log(`prepared ${codes.length} authorization codes in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  let next = 0;
  return {
    kind: 'ready',
    connections: options.connections,
    amount: codes.length,
    requests: [
      {
        method: 'POST',
        path: `/v1/${tenant.slug}/oidc/token`,
        setupRequest(req: RawRequest) {
          const { code, verifier } = codes[next++ % codes.length]!;
          const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, ...(rbac ? { resource: rbac.resource } : {}) });
          return { ...req, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` }, body: form.toString() };
        },
      },
    ],
  };
}
