import { getInputOutputParsers } from 'trpc-to-openapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { appRouter } from '../../src/routers/index.js';
import { createTenant, expectError, type TestTenant } from '../helpers/api.js';
import { useTestServer } from '../helpers/suite.js';

/**
 * The REST façade runs on trpc-to-openapi with patches/trpc-to-openapi+3.3.0.patch applied (by
 * `patch-package` on install): the input parsers of a procedure are computed once, not merged again
 * on every request; only path and query parameters are converted from strings, never a body and
 * never by changing the shared schema (test/api/rest-body-coercion.test.ts; docs/performance.md).
 */
const suite = useTestServer();
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTenant(suite.api);
});

type Procedures = Parameters<typeof getInputOutputParsers>[0];

describe('trpc-to-openapi patch', () => {
  it('hands back the same input parser for a procedure on every call (the merge is not redone per request)', () => {
    const procedures = Object.values(appRouter._def.procedures) as unknown as Procedures[];
    const merged = procedures.filter((p) => (p._def as { inputs: unknown[] }).inputs.length >= 2);
    expect(merged.length).toBeGreaterThan(0);
    for (const procedure of merged) {
      expect(getInputOutputParsers(procedure).inputParser).toBe(getInputOutputParsers(procedure).inputParser);
    }
  });

  it('still coerces query strings on every request after the first (limit=1 twice, then a non-number)', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await suite.api.get(`/v1/${tenant.slug}/audit?limit=1`, { token: tenant.accessToken });
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(1);
    }
    expectError(await suite.api.get(`/v1/${tenant.slug}/audit?limit=abc`, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
  });

  it('still validates the merged path and body input on every request', async () => {
    for (let i = 0; i < 2; i++) {
      expectError(await suite.api.delete(`/v1/${tenant.slug}/users/not-a-uuid`, { token: tenant.accessToken }), 400, 'BAD_REQUEST', 'validation_failed');
    }
  });
});
