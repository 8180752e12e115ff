import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import { ApiError } from '../../src/lib/errors.js';
import type { Principal } from '../../src/services/sessions/bearer-authentication-service.js';
import { PASSWORD } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the session look-up of every authenticated request (BearerAuthenticationService:
 * `resolveTenant` then `authenticate`, docs/architecture.md "One request") and the refresh-token
 * rotation of SessionService.refresh (docs/api-rules.md "Credentials and sessions").
 */

const suite = useServices();

/** What the tenant middleware and the auth middleware do with a bearer token, one after the other. */
async function principalOf(slug: string, token: string): Promise<Principal> {
  const em = suite.em();
  const authorization = `Bearer ${token}`;
  const resolved = await suite.services.credentials.resolveTenant(em, slug, authorization);
  if (!resolved) throw new Error(`no live tenant ${slug}`);
  return suite.services.credentials.authenticate(em, resolved.tenant, authorization, resolved.sessionCheck);
}

function reasonOf(result: PromiseSettledResult<unknown>): string | undefined {
  return result.status === 'rejected' && result.reason instanceof ApiError ? String(result.reason.details.reason) : undefined;
}

describe('BearerAuthenticationService: the session look-up', () => {
  it('resolves a live session to its user, with the role as stored now', async () => {
    const { tenant, admin, tokens } = await suite.createTenant();
    expect(await principalOf(tenant.slug, tokens.accessToken)).toEqual({
      kind: 'user', tenantId: tenant.id, userId: admin.id, sessionId: tokens.sessionId, role: 'Admin',
    });
  });

  it('refuses the access token of an ended session at once (session_revoked)', async () => {
    const { tenant, admin, actor, tokens } = await suite.createTenant();
    await suite.services.sessions.revokeOwnedSession(suite.scope(tenant, actor), admin.id, tokens.sessionId, 'session_revoked_by_user');
    await expect(principalOf(tenant.slug, tokens.accessToken)).rejects.toMatchObject({ details: { reason: 'session_revoked' } });
  });

  it('refuses the access token of a suspended user (user_suspended)', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const { tokens } = await suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD });
    await expect(principalOf(tenant.slug, tokens.accessToken)).resolves.toMatchObject({ userId: user.id, role: 'Member' });
    await suite.services.userAdministration.change(suite.scope(tenant, actor), user.id, { status: 'Suspended' });
    // suspension ended the session too; the look-up says so before it looks at the status
    await expect(principalOf(tenant.slug, tokens.accessToken)).rejects.toMatchObject({ details: { reason: 'session_revoked' } });
  });

  it('refuses a token of one workspace at another (tenant_mismatch), and an unknown slug resolves to nothing', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    await expect(principalOf(second.tenant.slug, first.tokens.accessToken)).rejects.toMatchObject({ details: { reason: 'tenant_mismatch' } });
    expect(await suite.services.credentials.resolveTenant(suite.em(), `${first.tenant.slug}-gone`, `Bearer ${first.tokens.accessToken}`)).toBeNull();
  });

  it('refuses a token that does not verify without reading a session (invalid_token)', async () => {
    const { tenant, tokens } = await suite.createTenant();
    const forged = `${tokens.accessToken.slice(0, -4)}AAAA`;
    const resolved = await suite.services.credentials.resolveTenant(suite.em(), tenant.slug, `Bearer ${forged}`);
    expect(resolved?.sessionCheck).toMatchObject({ verified: false });
    await expect(principalOf(tenant.slug, forged)).rejects.toMatchObject({ details: { reason: 'invalid_token' } });
  });
});

describe('SessionService.refresh: rotation', () => {
  async function signedIn(): Promise<{ tenant: Tenant; refreshToken: string; sessionId: string; userId: string }> {
    const { tenant, admin, tokens } = await suite.createTenant();
    return { tenant, refreshToken: tokens.refreshToken, sessionId: tokens.sessionId, userId: admin.id };
  }

  it('rotates a token into a working pair of the same session', async () => {
    const { tenant, refreshToken, sessionId, userId } = await signedIn();
    const { tokens, user } = await suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta);
    expect(user.id).toBe(userId);
    expect(tokens.sessionId).toBe(sessionId);
    expect(tokens.refreshToken).not.toBe(refreshToken);
    await expect(principalOf(tenant.slug, tokens.accessToken)).resolves.toMatchObject({ userId, sessionId });
    const next = await suite.services.sessions.refresh(suite.em(), tenant.slug, tokens.refreshToken, suite.meta);
    expect(next.tokens.sessionId).toBe(sessionId);
  });

  it('lets exactly one of two concurrent refreshes of one token win; the loser is a replay that ends the family', async () => {
    const { tenant, refreshToken, sessionId } = await signedIn();
    const results = await Promise.allSettled([
      suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta),
      suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(results.map(reasonOf).filter(Boolean)).toEqual(['refresh_token_reused']);
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof suite.services.sessions.refresh>>>).value;
    await expect(suite.services.sessions.refresh(suite.em(), tenant.slug, winner.tokens.refreshToken, suite.meta))
      .rejects.toMatchObject({ details: { reason: 'session_revoked' } });
    const compromised = await suite.auditOf(tenant.id, 'SessionFamilyCompromised');
    expect(compromised.map((e) => e.targetId)).toEqual([sessionId]);
  });

  it('treats a rotated token presented later as a replay: refresh_token_reused, family revoked, audited once', async () => {
    const { tenant, refreshToken, sessionId, userId } = await signedIn();
    const first = await suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta);
    await expect(suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta))
      .rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'refresh_token_reused' } });
    // the successor issued before the replay is dead too, and so is the session's access token
    await expect(suite.services.sessions.refresh(suite.em(), tenant.slug, first.tokens.refreshToken, suite.meta))
      .rejects.toMatchObject({ details: { reason: 'session_revoked' } });
    await expect(principalOf(tenant.slug, first.tokens.accessToken)).rejects.toMatchObject({ details: { reason: 'session_revoked' } });
    expect(await suite.services.sessions.listLive(suite.em(), tenant.id, userId)).toEqual([]);
    const revoked = await suite.auditOf(tenant.id, 'SessionRevoked');
    expect(revoked.map((e) => [e.targetId, e.details.reason])).toEqual([[sessionId, 'refresh_token_reused']]);
    // a second replay finds the family already ended: no second audit event
    await expect(suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta)).rejects.toMatchObject({ details: { reason: 'refresh_token_reused' } });
    expect(await suite.auditOf(tenant.id, 'SessionFamilyCompromised')).toHaveLength(1);
  });

  it('gives two concurrent refreshes with one Idempotency-Key the same answer, and rotates once', async () => {
    const { tenant, refreshToken, sessionId } = await signedIn();
    const [a, b] = await Promise.all([
      suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta, 'retry-1'),
      suite.services.sessions.refresh(suite.em(), tenant.slug, refreshToken, suite.meta, 'retry-1'),
    ]);
    expect(b.tokens).toEqual(a.tokens);
    expect(a.tokens.sessionId).toBe(sessionId);
    await expect(suite.services.sessions.refresh(suite.em(), tenant.slug, a.tokens.refreshToken, suite.meta)).resolves.toBeDefined();
  });

  it('knows a token only in its own workspace: invalid_token at another, tenant_not_found at none', async () => {
    const { refreshToken } = await signedIn();
    const other = await suite.createTenant();
    await expect(suite.services.sessions.refresh(suite.em(), other.tenant.slug, refreshToken, suite.meta))
      .rejects.toMatchObject({ details: { reason: 'invalid_token' } });
    await expect(suite.services.sessions.refresh(suite.em(), `gone-${other.tenant.slug}`, refreshToken, suite.meta))
      .rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
