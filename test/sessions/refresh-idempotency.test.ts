import { randomUUID } from 'node:crypto';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { AppRouter } from '../../src/routers/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, PASSWORD, signupMember, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';
import { sha256Hex } from '../../src/security/tokens.js';

/**
 * auth/refresh with an `Idempotency-Key` (docs/api-rules.md "Credentials and sessions"): an honest
 * retry whose answer was lost gets the same answer and the session goes on; any other replay still
 * revokes the family.
 */
const suite = useTestServer();
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTenant(suite.api);
});

interface Pair {
  accessToken: string;
  refreshToken: string;
}

async function newSession(): Promise<Pair> {
  const { email } = await signupMember(suite.api, tenant.slug);
  const res = await suite.api.post(`/v1/${tenant.slug}/auth/login`, { email, password: PASSWORD });
  expect(res.status).toBe(200);
  return res.body as Pair;
}

const refresh = (refreshToken: string, key?: string) =>
  suite.api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken }, key === undefined ? {} : { headers: { 'idempotency-key': key } });
const me = (token: string) => suite.api.get(`/v1/${tenant.slug}/me`, { token });

describe('auth/refresh with Idempotency-Key', () => {
  it('a retry with the same key and token gets the same pair, and the session goes on', async () => {
    const first = await newSession();
    const key = randomUUID();
    const answered = await refresh(first.refreshToken, key);
    expect(answered.status).toBe(200);
    // the answer was "lost": the client retries with what it still has
    const retried = await refresh(first.refreshToken, key);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toEqual(answered.body);
    // no second successor was issued: one child of the presented token
    const children = await suite.server.services.orm.em.fork().execute<{ n: string }[]>(
      `select count(*) as n from refresh_token c join refresh_token p on c.parent_id = p.id where p.token_hash = ?`,
      [sha256Hex(first.refreshToken)],
    );
    expect(Number(children[0]!.n)).toBe(1);
    expect((await me(retried.body.accessToken)).status).toBe(200);
    const next = await refresh(retried.body.refreshToken, randomUUID());
    expect(next.status).toBe(200);
    expect((await me(next.body.accessToken)).status).toBe(200);
  });

  it('keeps the answer encrypted, under a hash of token and key', async () => {
    const first = await newSession();
    const key = randomUUID();
    const answered = await refresh(first.refreshToken, key);
    const rows = await suite.server.services.orm.em.fork().execute<{ key_hash: string; answer: string }[]>(
      'select key_hash, answer from refresh_answer where tenant_id = ?',
      [tenant.id],
    );
    const text = JSON.stringify(rows);
    expect(rows.length).toBeGreaterThan(0);
    for (const secret of [answered.body.refreshToken, answered.body.accessToken, first.refreshToken, key, sha256Hex(answered.body.refreshToken)]) {
      expect(text).not.toContain(secret);
    }
  });

  it('without a key, a replay revokes the family as before', async () => {
    const first = await newSession();
    const answered = await refresh(first.refreshToken, randomUUID());
    expect(answered.status).toBe(200);
    expectError(await refresh(first.refreshToken), 401, 'UNAUTHORIZED', 'refresh_token_reused');
    expectError(await me(answered.body.accessToken), 401, 'UNAUTHORIZED', 'session_revoked');
  });

  it('with another key, a replay revokes the family', async () => {
    const first = await newSession();
    const answered = await refresh(first.refreshToken, randomUUID());
    expect(answered.status).toBe(200);
    expectError(await refresh(first.refreshToken, randomUUID()), 401, 'UNAUTHORIZED', 'refresh_token_reused');
    expectError(await refresh(answered.body.refreshToken), 401, 'UNAUTHORIZED', 'session_revoked');
  });

  it('the key with another token is no key at all: that token is refused on its own terms', async () => {
    const first = await newSession();
    const key = randomUUID();
    expect((await refresh(first.refreshToken, key)).status).toBe(200);
    expectError(await refresh('not-a-real-token', key), 401, 'UNAUTHORIZED', 'invalid_token');
  });

  it('once the issued pair was used, the old token with the same key is a replay', async () => {
    const first = await newSession();
    const key = randomUUID();
    const answered = await refresh(first.refreshToken, key);
    expect((await refresh(answered.body.refreshToken)).status).toBe(200);
    expectError(await refresh(first.refreshToken, key), 401, 'UNAUTHORIZED', 'refresh_token_reused');
  });

  it('two concurrent refreshes with the same key yield one lineage, both answered with it', async () => {
    for (let round = 0; round < 3; round++) {
      const first = await newSession();
      const key = randomUUID();
      const results = await Promise.all([refresh(first.refreshToken, key), refresh(first.refreshToken, key), refresh(first.refreshToken, key)]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(new Set(results.map((r) => r.body.refreshToken)).size).toBe(1);
      expect((await refresh(results[0]!.body.refreshToken)).status).toBe(200);
    }
  });

  it('two concurrent refreshes without keys: exactly one wins, as before', async () => {
    const first = await newSession();
    const results = await Promise.all([refresh(first.refreshToken), refresh(first.refreshToken)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('an answer past its 60 s is not given: the retry is a replay; the sweep deletes it', async () => {
    const first = await newSession();
    const key = randomUUID();
    const answered = await refresh(first.refreshToken, key);
    expect(answered.status).toBe(200);
    const em = suite.server.services.orm.em.fork();
    await em.execute(`update refresh_answer set expires_at = now() - interval '1 second' where tenant_id = ?`, [tenant.id]);
    expectError(await refresh(first.refreshToken, key), 401, 'UNAUTHORIZED', 'refresh_token_reused');
    expect(await suite.server.services.sessions.purgeExpiredAnswers(em)).toBeGreaterThan(0);
    const left = await em.execute<{ n: string }[]>('select count(*) as n from refresh_answer where tenant_id = ? and expires_at <= now()', [tenant.id]);
    expect(Number(left[0]!.n)).toBe(0);
  });

  it('refuses a key that is not 1 to 255 visible ASCII characters, before spending the token', async () => {
    const first = await newSession();
    for (const bad of ['a'.repeat(256), 'with space', 'ümlaut']) {
      const res = await suite.api.post(`/v1/${tenant.slug}/auth/refresh`, { refreshToken: first.refreshToken }, { headers: { 'idempotency-key': bad } });
      expectError(res, 400, 'BAD_REQUEST', 'invalid_idempotency_key');
    }
    expect((await refresh(first.refreshToken, 'k'.repeat(255))).status).toBe(200);
  });

  it('the hosted pages’ cookie refresh honours the key the same way', async () => {
    const { email } = await signupMember(suite.api, tenant.slug);
    const login = await fetch(`${suite.server.url}/trpc/auth.login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie' },
      body: JSON.stringify({ tenantSlug: tenant.slug, email, password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const key = randomUUID();
    const call = () =>
      fetch(`${suite.server.url}/trpc/browser.refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-refresh-transport': 'cookie', 'idempotency-key': key, cookie },
        body: JSON.stringify({ tenantSlug: tenant.slug }),
      });
    const a = await call();
    const b = await call();
    expect([a.status, b.status]).toEqual([200, 200]);
    const tokenOf = async (r: Response) => ((await r.json()) as { result: { data: { accessToken: string } } }).result.data.accessToken;
    expect(await tokenOf(a)).toBe(await tokenOf(b));
  });
});

describe('the client package’s idempotent retry', () => {
  it('a refresh whose first answer is lost is retried with the same key and the session goes on', async () => {
    const { withIdempotencyKey } = await import('../../packages/client/src/idempotent-retry.js');
    const first = await newSession();
    const keys: string[] = [];
    let lost = 0;
    const result = await withIdempotencyKey(async (key) => {
      keys.push(key);
      const response = await fetch(`${suite.server.url}/v1/${tenant.slug}/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ refreshToken: first.refreshToken }),
      });
      // The service rotated the token, but the answer never reaches the client.
      if (lost++ === 0) throw new TypeError('fetch failed');
      return { response, data: (await response.json()) as Pair };
    }, { maxDelayMs: 10 });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect(result.response.status).toBe(200);
    expect((await me(result.data.accessToken)).status).toBe(200);
    expect((await refresh(result.data.refreshToken)).status).toBe(200);
  });
});

describe('the typed tRPC client', () => {
  it('sends the key from the operation context: the retry gets the same pair', async () => {
    const first = await newSession();
    const trpc = createTRPCClient<AppRouter>({
      links: [
        httpLink({
          url: `${suite.server.url}/trpc`,
          headers: ({ op }) => (typeof op.context.idempotencyKey === 'string' ? { 'idempotency-key': op.context.idempotencyKey } : {}),
        }),
      ],
    });
    const context = { idempotencyKey: randomUUID() };
    const a = await trpc.auth.refresh.mutate({ tenantSlug: tenant.slug, refreshToken: first.refreshToken }, { context });
    const b = await trpc.auth.refresh.mutate({ tenantSlug: tenant.slug, refreshToken: first.refreshToken }, { context });
    expect(b.refreshToken).toBe(a.refreshToken);
    expect(b.accessToken).toBe(a.accessToken);
    expect((await me(b.accessToken)).status).toBe(200);
  });
});
