import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../../src/routers/index.js';
import { PASSWORD, unique } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** A TypeScript front end's client: typed from `AppRouter`, talking to `/trpc`. */
function client(token?: string) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${server.url}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
  });
}

describe('typed tRPC client', () => {
  it('creates a tenant, reads /me and refreshes through the same procedures as REST', async () => {
    const created = await client().tenants.create.mutate({ name: `Typed ${unique()}`, email: `t-${unique()}@example.com`, password: PASSWORD });
    // typed result: the compiler knows these fields
    const slug: string = created.tenantSlug;
    expect(created.user.role).toBe('Admin');

    const me = await client(created.accessToken).me.get.query({ tenantSlug: slug });
    expect(me.email).toBe(created.user.email);
    expect(me.tenant.slug).toBe(slug);

    const refreshed = await client().auth.refresh.mutate({ tenantSlug: slug, refreshToken: created.refreshToken! });
    expect(refreshed.refreshToken).not.toBe(created.refreshToken);
  });

  it('carries the error reason in error.data.details', async () => {
    const err = await client().me.get.query({ tenantSlug: 'no-such-tenant' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    const data = (err as TRPCClientError<AppRouter>).data;
    expect(data?.httpStatus).toBe(404);
    expect(data?.details.reason).toBe('tenant_not_found');
  });
});
