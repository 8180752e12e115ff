import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import type { IdpCallbackParams } from '../../src/services/idp/idp-service.js';
import { findLiveTenantBySlug } from '../../src/queries/tenant.js';
import { unique } from '../helpers/api.js';
import { startOpenIdProvider, type TestOpenIdProvider } from '../helpers/oidc-provider.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: sign-in with the workspace's upstream OpenID provider (IdpService; docs/idp.md) against
 * a real test provider on loopback: the configured issuer is discovered, the state is spent once and
 * bound to the browser that started it, a verified address becomes a Member, and the workspace's
 * allowed domains hold.
 */

const suite = useServices({ IDP_ALLOW_PRIVATE_ISSUERS: 'true' });
let upstream: TestOpenIdProvider;

beforeAll(async () => {
  upstream = await startOpenIdProvider();
});
afterAll(async () => {
  await upstream?.close();
});

/** A workspace whose provider is the test provider, configured by its Admin. */
async function configured(allowedEmailDomains?: string[]): Promise<Tenant> {
  const { tenant, admin, tokens, actor } = await suite.createTenant();
  const clientId = `client-${unique()}`;
  await upstream.addClient(clientId, 'client-secret-0123456789', suite.services.idp.redirectUri(tenant));
  await suite.services.idp.putCredentials(suite.scope(tenant, actor), { clientId, clientSecret: 'client-secret-0123456789', issuer: upstream.issuer, allowedEmailDomains },
    { kind: 'user', userId: admin.id, sessionId: tokens.sessionId });
  return (await findLiveTenantBySlug(suite.em(), tenant.slug))!;
}

/** Starts a sign-in bound to `binding` and lets `sub` sign in upstream; the callback's parameters. */
async function signInUpstream(tenant: Tenant, sub: string, binding: string): Promise<IdpCallbackParams> {
  const url = await suite.services.idp.start(suite.em(), tenant, binding);
  const back = await upstream.signIn(url, sub);
  return Object.fromEntries(back.searchParams) as IdpCallbackParams;
}

describe('IdpService', () => {
  it('makes a verified provider account a Member with a session, and spends the state once', async () => {
    const tenant = await configured();
    const sub = `sub-${unique()}`;
    const email = `upstream-${unique()}@example.com`;
    upstream.setAccount(sub, { email, email_verified: true });
    const params = await signInUpstream(tenant, sub, 'browser-1');
    const { user, tokens } = await suite.services.idp.callback(suite.scope(tenant), params, 'browser-1', true);
    expect(user).toMatchObject({ email, role: 'Member', status: 'Active' });
    expect(await suite.services.sessions.authenticationOf(suite.em(), tenant.id, tokens.sessionId)).toMatchObject({ method: 'idp' });
    await expect(suite.services.idp.callback(suite.scope(tenant), params, 'browser-1', true))
      .rejects.toMatchObject({ details: { reason: 'state_reused' } });
    // the second sign-in of the same subject finds the same user
    const again = await suite.services.idp.callback(suite.scope(tenant), await signInUpstream(tenant, sub, 'browser-2'), 'browser-2', true);
    expect(again.user.id).toBe(user.id);
  });

  it('refuses a callback from another browser than the one that started it, and spends the state all the same', async () => {
    const tenant = await configured();
    const sub = `sub-${unique()}`;
    upstream.setAccount(sub, { email: `x-${unique()}@example.com`, email_verified: true });
    const params = await signInUpstream(tenant, sub, 'the-right-browser');
    await expect(suite.services.idp.callback(suite.scope(tenant), params, 'another-browser', true))
      .rejects.toMatchObject({ details: { reason: 'browser_mismatch' } });
    await expect(suite.services.idp.callback(suite.scope(tenant), params, 'the-right-browser', true))
      .rejects.toMatchObject({ details: { reason: 'state_reused' } });
  });

  it('refuses an address outside the allowed domains or not verified there, audited, and creates nobody', async () => {
    const tenant = await configured(['allowed.example']);
    const outside = `sub-${unique()}`;
    upstream.setAccount(outside, { email: `someone-${unique()}@elsewhere.example`, email_verified: true });
    await expect(suite.services.idp.callback(suite.scope(tenant), await signInUpstream(tenant, outside, 'b'), 'b', true))
      .rejects.toMatchObject({ details: { reason: 'idp_email_domain_not_allowed' } });
    // an address the provider has not verified counts as no address: not of an allowed domain either
    const unverified = `sub-${unique()}`;
    upstream.setAccount(unverified, { email: `someone-${unique()}@allowed.example`, email_verified: false });
    await expect(suite.services.idp.callback(suite.scope(tenant), await signInUpstream(tenant, unverified, 'b'), 'b', true))
      .rejects.toMatchObject({ details: { reason: 'idp_email_domain_not_allowed' } });
    const failures = await suite.auditOf(tenant.id, 'UserLoginFailed');
    expect(failures.map((e) => e.details.emailDomain)).toEqual([null, 'elsewhere.example']);
    expect(await suite.auditOf(tenant.id, 'UserSignup')).toHaveLength(1); // the Admin's own
  });

  it('refuses an unverified address where any domain is allowed (idp_email_unverified)', async () => {
    const tenant = await configured();
    const unverified = `sub-${unique()}`;
    upstream.setAccount(unverified, { email: `someone-${unique()}@example.com`, email_verified: false });
    await expect(suite.services.idp.callback(suite.scope(tenant), await signInUpstream(tenant, unverified, 'b'), 'b', true))
      .rejects.toMatchObject({ details: { reason: 'idp_email_unverified' } });
    expect(await suite.auditOf(tenant.id, 'UserSignup')).toHaveLength(1);
  });

  it('refuses a state another workspace started', async () => {
    const first = await configured();
    const second = await configured();
    const sub = `sub-${unique()}`;
    upstream.setAccount(sub, { email: `cross-${unique()}@example.com`, email_verified: true });
    const params = await signInUpstream(first, sub, 'b');
    await expect(suite.services.idp.callback(suite.scope(second), params, 'b', true))
      .rejects.toMatchObject({ details: { reason: 'invalid_state' } });
  });
});
