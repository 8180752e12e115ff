import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, expectError, signupMember, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

const suite = useTestServer();
let tenant: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  tenant = await createTenant(suite.api);
  other = await createTenant(suite.api);
  for (let i = 0; i < 4; i++) await signupMember(suite.api, tenant.slug);
  await signupMember(suite.api, other.slug);
});

const list = (t: TestTenant, query = '') => suite.api.get(`/v1/${t.slug}/users${query}`, { token: t.accessToken });

describe('GET /v1/{tenantSlug}/users with limit and cursor', () => {
  it('answers every user at once without limit or cursor, as before (no nextCursor)', async () => {
    const res = await list(tenant);
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(5);
    expect(res.body).not.toHaveProperty('nextCursor');
  });

  it('pages through the same users in the same order, each once, and ends with nextCursor null', async () => {
    const all = (await list(tenant)).body.items as { id: string }[];
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(tenant, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.items as { id: string }[]).map((u) => u.id));
      cursor = res.body.nextCursor as string | null;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.map((u) => u.id));
  });

  it('gives a full last page nextCursor null only when nothing follows', async () => {
    const res = await list(tenant, '?limit=5');
    expect(res.body.items).toHaveLength(5);
    expect(res.body.nextCursor).toBeNull();
  });

  it('never shows another tenant\'s users through a cursor of this tenant', async () => {
    const first = await list(tenant, '?limit=1');
    const res = await list(other, `?limit=10&cursor=${encodeURIComponent(first.body.nextCursor as string)}`);
    expect(res.status).toBe(200);
    for (const user of res.body.items as { tenantId: string }[]) expect(user.tenantId).toBe(other.id);
  });

  it('refuses a cursor it did not hand out and a limit out of range', async () => {
    expectError(await list(tenant, '?cursor=not-a-cursor'), 400, 'BAD_REQUEST', 'invalid_cursor');
    const forged = Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000000' or 1=1 --", 'x'])).toString('base64url');
    expectError(await list(tenant, `?cursor=${forged}`), 400, 'BAD_REQUEST', 'invalid_cursor');
    expectError(await list(tenant, '?limit=0'), 400, 'BAD_REQUEST', 'validation_failed');
    expectError(await list(tenant, '?limit=1001'), 400, 'BAD_REQUEST', 'validation_failed');
  });
});
