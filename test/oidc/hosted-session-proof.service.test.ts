import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import { ApiError } from '../../src/lib/errors.js';
import { sessionBinding } from '../../src/security/session-binding.js';
import type { SessionProof } from '../../src/services/oidc/oidc-provider-service.js';
import type { Principal, UserPrincipal } from '../../src/services/sessions/bearer-authentication-service.js';
import type { IssuedTokens } from '../../src/services/sessions/session-service.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: which hosted session may finish an application's sign-in (OidcProviderService
 * `hostedSessionOf` and `finishSignIn`, docs/oidc.md "Sign-in"): a person's session, never an API
 * key, proven beyond its access token by the session-binding cookie of that session and workspace,
 * or by the session's current refresh token; an ended session is refused. The proof is judged before
 * the provider's interaction is looked at.
 */

const suite = useServices();

function principalOf(tenant: Tenant, userId: string, tokens: IssuedTokens): UserPrincipal {
  return { kind: 'user', tenantId: tenant.id, userId, sessionId: tokens.sessionId, role: 'Admin' };
}

const noProof: SessionProof = { bindingCookie: undefined, refreshToken: undefined };

/** The ApiError a call rejects with, as `{status code, reason, message}`. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; reason: unknown; message: string }> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  const apiError = err as ApiError;
  return { code: apiError.code, reason: apiError.details.reason, message: apiError.message };
}

/** A request from a browser without the provider's interaction cookie, and its response. */
function bareExchange(): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/complete';
  return { req, res: new ServerResponse(req) };
}

describe('the hosted session that may finish a sign-in', () => {
  it('is proven by the binding cookie of that session: its user, session, sign-in time and method', async () => {
    const { tenant, admin, tokens } = await suite.createTenant();
    const bindingCookie = sessionBinding(suite.config.jwtSecret, tenant.slug, tokens.sessionId);
    const session = await suite.services.oidc.hostedSessionOf(suite.em(), tenant, principalOf(tenant, admin.id, tokens), { bindingCookie, refreshToken: undefined });
    const authentication = await suite.services.sessions.authenticationOf(suite.em(), tenant.id, tokens.sessionId);
    expect(session).toEqual({ userId: admin.id, sessionId: tokens.sessionId, authenticatedAt: authentication!.authenticatedAt, method: authentication!.method });
    expect(session.method).toBeTruthy();
  });

  it('is proven by the session\'s current refresh token, not a rotated one nor another session\'s', async () => {
    const { tenant, admin, tokens } = await suite.createTenant();
    const principal = principalOf(tenant, admin.id, tokens);
    const other = await suite.services.sessions.start({ em: suite.em(), tenant, meta: suite.meta }, admin, 'password');
    expect(await refusal(suite.services.oidc.hostedSessionOf(suite.em(), tenant, principal, { bindingCookie: undefined, refreshToken: other.refreshToken })))
      .toMatchObject({ code: 'UNAUTHORIZED', reason: 'session_proof_required' });

    expect(await suite.services.oidc.hostedSessionOf(suite.em(), tenant, principal, { bindingCookie: undefined, refreshToken: tokens.refreshToken }))
      .toMatchObject({ userId: admin.id, sessionId: tokens.sessionId });
    const rotated = await suite.services.sessions.refresh(suite.em(), tenant.slug, tokens.refreshToken, suite.meta);
    expect(rotated.tokens.sessionId).toBe(tokens.sessionId);
    expect(await refusal(suite.services.oidc.hostedSessionOf(suite.em(), tenant, principal, { bindingCookie: undefined, refreshToken: tokens.refreshToken })))
      .toMatchObject({ reason: 'session_proof_required' });
    expect(await suite.services.oidc.hostedSessionOf(suite.em(), tenant, principal, { bindingCookie: undefined, refreshToken: rotated.tokens.refreshToken }))
      .toMatchObject({ sessionId: tokens.sessionId });
  });

  it('is not proven by an access token alone, nor by the binding of another session or another workspace', async () => {
    const { tenant, admin, tokens } = await suite.createTenant();
    const principal = principalOf(tenant, admin.id, tokens);
    const other = await suite.services.sessions.start({ em: suite.em(), tenant, meta: suite.meta }, admin, 'password');
    const elsewhere = await suite.createTenant();
    const cases: SessionProof[] = [
      noProof,
      { bindingCookie: sessionBinding(suite.config.jwtSecret, tenant.slug, other.sessionId), refreshToken: undefined },
      { bindingCookie: sessionBinding(suite.config.jwtSecret, elsewhere.tenant.slug, tokens.sessionId), refreshToken: undefined },
      { bindingCookie: 'x'.repeat(43), refreshToken: undefined },
    ];
    for (const proof of cases) {
      expect(await refusal(suite.services.oidc.hostedSessionOf(suite.em(), tenant, principal, proof))).toEqual({
        code: 'UNAUTHORIZED', reason: 'session_proof_required', message: 'Sign in again on this device to continue to the application',
      });
    }
  });

  it('refuses an API key with 401 user_token_required in the words of finishing a sign-in', async () => {
    const { tenant, tokens, admin } = await suite.createTenant();
    const apiKey: Principal = { kind: 'api_key', tenantId: tenant.id, apiKeyId: admin.id, environment: 'live' };
    const bindingCookie = sessionBinding(suite.config.jwtSecret, tenant.slug, tokens.sessionId);
    expect(await refusal(suite.services.oidc.hostedSessionOf(suite.em(), tenant, apiKey, { bindingCookie, refreshToken: tokens.refreshToken }))).toEqual({
      code: 'UNAUTHORIZED', reason: 'user_token_required', message: 'Finishing a sign-in needs the person\'s session, not an API key',
    });
  });

  it('refuses a session that ended since its access token was checked with 401 session_revoked', async () => {
    const { tenant, admin, tokens, actor } = await suite.createTenant();
    await suite.services.sessions.revokeOwnedSession(suite.scope(tenant, actor), admin.id, tokens.sessionId, 'session_revoked_by_user');
    const bindingCookie = sessionBinding(suite.config.jwtSecret, tenant.slug, tokens.sessionId);
    expect(await refusal(suite.services.oidc.hostedSessionOf(suite.em(), tenant, principalOf(tenant, admin.id, tokens), { bindingCookie, refreshToken: undefined })))
      .toMatchObject({ reason: 'session_revoked' });
    // its refresh token is no proof either: the session is gone
    expect(await refusal(suite.services.oidc.hostedSessionOf(suite.em(), tenant, principalOf(tenant, admin.id, tokens), { bindingCookie: undefined, refreshToken: tokens.refreshToken })))
      .toMatchObject({ code: 'UNAUTHORIZED', reason: 'session_revoked' });
  });
});

describe('finishing a sign-in (finishSignIn)', () => {
  it('judges the session proof before the interaction: without proof 401 session_proof_required, with it the missing interaction cookie 401 interaction_not_found', async () => {
    const { tenant, admin, tokens } = await suite.createTenant();
    const principal = principalOf(tenant, admin.id, tokens);
    const first = bareExchange();
    expect(await refusal(suite.services.oidc.finishSignIn(suite.em(), tenant, principal, noProof, first.req, first.res, suite.meta)))
      .toMatchObject({ reason: 'session_proof_required' });
    const second = bareExchange();
    const proof = { bindingCookie: sessionBinding(suite.config.jwtSecret, tenant.slug, tokens.sessionId), refreshToken: undefined };
    expect(await refusal(suite.services.oidc.finishSignIn(suite.em(), tenant, principal, proof, second.req, second.res, suite.meta)))
      .toMatchObject({ reason: 'interaction_not_found' });
    expect(await suite.auditOf(tenant.id, 'OidcSignIn')).toEqual([]);
  });
});
