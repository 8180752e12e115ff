import { describe, expect, it } from 'vitest';
import { appRouter } from '../../src/routers/index.js';
import { PROCEDURE_RATE_LIMITS } from '../../src/services/rate-limits/rate-limit-rules.js';

/**
 * The rate-limit table is keyed by tRPC procedure path (docs/api-rules.md "Rate limits"): a renamed
 * or removed procedure would silently lose its limit, so every key must name a procedure of the router.
 */
describe('the rate-limit table', () => {
  it('names only procedures that exist', () => {
    const procedures = new Set(Object.keys(appRouter._def.procedures));
    const unknown = Object.keys(PROCEDURE_RATE_LIMITS).filter((path) => !procedures.has(path));
    expect(unknown).toEqual([]);
  });

  it('limits every public procedure that checks a credential, sends mail or creates an account per IP', () => {
    for (const path of ['auth.login', 'auth.signup', 'tenants.create', 'invites.accept', 'auth.refresh', 'auth.requestPasswordReset', 'auth.passkeyVerify']) {
      expect(PROCEDURE_RATE_LIMITS[path]?.ip, path).toBeDefined();
    }
  });
});
