import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import type { SignIn } from '../../src/services/sign-in/password-sign-in-service.js';
import { useServices, type ServiceTenant } from '../helpers/services.js';
import { SoftwareAuthenticator } from '../helpers/webauthn-authenticator.js';

/**
 * Below HTTP: passkey registration and sign-in (PasskeyService; docs/passkeys.md) with a software
 * authenticator that signs as a real one: a challenge is spent once, a passkey signs in only its own
 * user, and a signature counter that goes back is refused as a clone.
 */

const ORIGIN = 'https://id.passkeys.test';
const suite = useServices({ PUBLIC_URL: ORIGIN });

/** Registers a passkey of the workspace's Admin (signed in moments ago) on `authenticator`. */
async function registered(authenticator: SoftwareAuthenticator): Promise<ServiceTenant> {
  const created = await suite.createTenant();
  const session = { userId: created.admin.id, sessionId: created.tokens.sessionId };
  const options = await suite.services.passkeys.registrationOptions(suite.em(), created.tenant, session);
  const response = authenticator.create(options) as unknown as RegistrationResponseJSON;
  await suite.services.passkeys.register(suite.scope(created.tenant, created.actor), session, response, 'laptop');
  return created;
}

async function signInWith(authenticator: SoftwareAuthenticator, tenant: Tenant, email?: string): Promise<SignIn> {
  const { challengeId, options } = await suite.services.passkeys.signInOptions(suite.em(), tenant, email);
  const response = authenticator.get(options) as unknown as AuthenticationResponseJSON;
  return suite.services.passkeys.signIn(suite.scope(tenant), challengeId, response);
}

describe('PasskeyService', () => {
  it('registers a passkey and signs its user in with it, with a session of method passkey', async () => {
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { tenant, admin } = await registered(authenticator);
    expect((await suite.services.passkeys.list(suite.em(), tenant, admin.id)).map((p) => p.name)).toEqual(['laptop']);
    const { user, tokens } = await signInWith(authenticator, tenant, admin.email);
    expect(user.id).toBe(admin.id);
    expect(await suite.services.sessions.authenticationOf(suite.em(), tenant.id, tokens.sessionId)).toMatchObject({ method: 'passkey' });
    expect((await suite.auditOf(tenant.id, 'PasskeyRegistered'))[0]?.details).toMatchObject({ name: 'laptop', fmt: 'none' });
  });

  it('spends a sign-in challenge once', async () => {
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { tenant } = await registered(authenticator);
    const { challengeId, options } = await suite.services.passkeys.signInOptions(suite.em(), tenant, undefined);
    const response = authenticator.get(options) as unknown as AuthenticationResponseJSON;
    await suite.services.passkeys.signIn(suite.scope(tenant), challengeId, response);
    await expect(suite.services.passkeys.signIn(suite.scope(tenant), challengeId, response))
      .rejects.toMatchObject({ details: { reason: 'passkey_challenge_invalid' } });
  });

  it('refuses a passkey at another workspace, and at a challenge bound to another user', async () => {
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { tenant } = await registered(authenticator);
    const other = await suite.createTenant();
    await expect(signInWith(authenticator, other.tenant)).rejects.toMatchObject({ details: { reason: 'invalid_passkey' } });
    const colleague = await suite.addUser(tenant);
    await expect(signInWith(authenticator, tenant, colleague.email)).rejects.toMatchObject({ details: { reason: 'invalid_passkey' } });
    expect((await suite.auditOf(tenant.id, 'UserLoginFailed')).length).toBeGreaterThanOrEqual(1);
  });

  it('refuses a signature counter that went back (a cloned authenticator) and audits it', async () => {
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { tenant, admin } = await registered(authenticator);
    const clone = authenticator.clone();
    await signInWith(authenticator, tenant);
    await signInWith(authenticator, tenant);
    await expect(signInWith(clone, tenant)).rejects.toMatchObject({ details: { reason: 'passkey_counter_regressed' } });
    expect((await suite.auditOf(tenant.id, 'PasskeyCloneSuspected')).map((e) => e.targetId)).toEqual([admin.id]);
  });
});
