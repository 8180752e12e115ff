import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** An account the test provider can sign in, with the claims of its `email` scope. */
export interface ProviderAccount {
  email?: string;
  email_verified?: boolean;
  /** RFC 8176 `amr` the provider puts in the ID token after this account signs in (none when absent). */
  amr?: string[];
}

/** A real OpenID Connect provider (oidc-provider 9) on 127.0.0.1, driven without a browser. */
export interface TestOpenIdProvider {
  /** `http://127.0.0.1:<port>`: the issuer to pass as `IDP_ISSUER`. */
  issuer: string;
  /** Path of every request the provider received, in order. */
  requests: string[];
  /** Registers (or replaces) a confidential client using `client_secret_basic`. */
  addClient(clientId: string, clientSecret: string, redirectUri: string): Promise<void>;
  /** Creates or replaces an account the login form accepts by its `sub`. */
  setAccount(sub: string, account: ProviderAccount): void;
  /**
   * Plays the browser: follows `authorizationUrl`, signs `sub` in on the login page, grants consent,
   * and returns the redirect to the client's callback (with `code`, `state`, `iss`).
   */
  signIn(authorizationUrl: string, sub: string): Promise<URL>;
  /** Plays a user who cancels on the login page; returns the error redirect to the callback. */
  abort(authorizationUrl: string): Promise<URL>;
  close(): Promise<void>;
}

/** A minimal cookie jar for one user agent talking to the provider only. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

type Stored = Record<string, unknown>;

/**
 * An oidc-provider storage adapter per provider instance. (The library's default memory adapter is
 * one store for the whole process, so two providers in one test would share clients, codes and
 * grants, which real providers never do.)
 */
function instanceAdapter(): new (model: string) => object {
  const store = new Map<string, { payload: Stored; expiresAt?: number }>();
  const live = (key: string) => {
    const entry = store.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt < Date.now()) {
      store.delete(key);
      return undefined;
    }
    return entry.payload;
  };
  return class InstanceAdapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: Stored, expiresIn?: number) {
      store.set(this.key(id), { payload, ...(expiresIn ? { expiresAt: Date.now() + expiresIn * 1000 } : {}) });
      if (typeof payload.grantId === 'string') store.set(`grant:${payload.grantId}:${this.key(id)}`, { payload: {} });
    }
    async find(id: string) {
      return live(this.key(id));
    }
    async findByUid(uid: string) {
      for (const [key] of store) if (key.startsWith(`${this.model}:`) && live(key)?.uid === uid) return live(key);
      return undefined;
    }
    async findByUserCode(userCode: string) {
      for (const [key] of store) if (key.startsWith(`${this.model}:`) && live(key)?.userCode === userCode) return live(key);
      return undefined;
    }
    async consume(id: string) {
      const payload = live(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const key of [...store.keys()]) {
        if (key.startsWith(`grant:${grantId}:`)) {
          store.delete(key);
          store.delete(key.slice(`grant:${grantId}:`.length));
        }
      }
    }
  };
}

/**
 * Starts oidc-provider on a free port of 127.0.0.1 (or `port`), with PKCE required for every client,
 * the `email` scope's claims, and its development login/consent pages (which `signIn` submits).
 */
export async function startOpenIdProvider(port = 0): Promise<TestOpenIdProvider> {
  const accounts = new Map<string, ProviderAccount>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

  const provider = new Provider(issuer, {
    adapter: instanceAdapter(),
    jwks: { keys: [{ ...signingKey, kid: 'test-key', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['test-provider-cookie-key-0123456789'] },
    claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'] },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      const { amr: _amr, ...claims } = account;
      return { accountId: sub, claims: async () => ({ sub, ...claims }) };
    },
  });
  // The development login page finishes with `{ login: { accountId } }`; add the account's `amr`,
  // as a provider that did multi-factor authentication would.
  const finishInteraction = provider.interactionFinished.bind(provider);
  provider.interactionFinished = (req, res, result, options) => {
    const login = result.login as { accountId: string } | undefined;
    const amr = login ? accounts.get(login.accountId)?.amr : undefined;
    return finishInteraction(req, res, amr ? { ...result, login: { ...login, amr } } : result, options);
  };
  const requests: string[] = [];
  const handle = provider.callback();
  server.on('request', (req, res) => {
    requests.push(new URL(req.url ?? '/', issuer).pathname);
    handle(req, res);
  });

  const isCallback = (url: URL, clientOrigin: string) => url.origin === clientOrigin || url.origin !== issuer;

  /** Follows redirects inside the provider until a page is shown or the client's callback is reached. */
  async function follow(start: string, jar: CookieJar, clientOrigin: string, init?: RequestInit): Promise<{ page?: string; callback?: URL }> {
    let url = start;
    let request: RequestInit | undefined = init;
    for (let hops = 0; hops < 10; hops++) {
      const res = await fetch(url, { redirect: 'manual', ...request, headers: { ...(request?.headers ?? {}), cookie: jar.header() } });
      jar.store(res);
      if (res.status >= 300 && res.status < 400) {
        const next = new URL(res.headers.get('location')!, url);
        if (isCallback(next, clientOrigin)) return { callback: next };
        url = next.href;
        request = undefined;
        continue;
      }
      const body = await res.text();
      if (res.status !== 200) throw new Error(`provider answered ${res.status} at ${url}: ${body.slice(0, 500)}`);
      return { page: url };
    }
    throw new Error('too many redirects at the provider');
  }

  const submit = (page: string, jar: CookieJar, clientOrigin: string, form: Record<string, string>) =>
    follow(page, jar, clientOrigin, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });

  const clientOriginOf = (authorizationUrl: string) => new URL(new URL(authorizationUrl).searchParams.get('redirect_uri')!).origin;

  return {
    issuer,
    requests,
    async addClient(clientId, clientSecret, redirectUri) {
      await provider.Client.adapter.upsert(clientId, {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      });
    },
    setAccount(sub, account) {
      accounts.set(sub, account);
    },
    async signIn(authorizationUrl, sub) {
      const jar = new CookieJar();
      const clientOrigin = clientOriginOf(authorizationUrl);
      const login = await follow(authorizationUrl, jar, clientOrigin);
      if (!login.page) throw new Error('expected the provider login page');
      const consent = await submit(login.page, jar, clientOrigin, { prompt: 'login', login: sub, password: 'any' });
      if (consent.callback) return consent.callback;
      const done = await submit(consent.page!, jar, clientOrigin, { prompt: 'consent' });
      if (!done.callback) throw new Error('expected a redirect to the callback after consent');
      return done.callback;
    },
    async abort(authorizationUrl) {
      const jar = new CookieJar();
      const clientOrigin = clientOriginOf(authorizationUrl);
      const login = await follow(authorizationUrl, jar, clientOrigin);
      if (!login.page) throw new Error('expected the provider login page');
      const aborted = await follow(`${login.page}/abort`, jar, clientOrigin);
      if (!aborted.callback) throw new Error('expected a redirect to the callback after abort');
      return aborted.callback;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Starts `count` independent providers (own issuer, port, signing key, accounts, clients and codes),
 * as different customers' OpenID providers would be.
 */
export async function startOpenIdProviders(count: number): Promise<TestOpenIdProvider[]> {
  const providers: TestOpenIdProvider[] = [];
  for (let i = 0; i < count; i++) providers.push(await startOpenIdProvider());
  return providers;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
