import { describe, expect, it } from 'vitest';
import { updatePasswordHash } from '../../src/queries/user.js';
import { hashPassword } from '../../src/security/passwords.js';
import { PASSWORD } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: who PasswordSignInService lets in (docs/api-rules.md "Credentials and sessions",
 * services/users/sign-in-eligibility.ts): an active user gets a session, a suspended, pending or
 * deleted one does not, and a wrong password is audited as `UserLoginFailed`.
 */

const suite = useServices();

describe('PasswordSignInService.login', () => {
  it('signs an active user in with a session and audits UserLogin and SessionCreated', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const { user: signedIn, tokens } = await suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD });
    expect(signedIn.id).toBe(user.id);
    expect(await suite.services.sessions.authenticationOf(suite.em(), tenant.id, tokens.sessionId)).toMatchObject({ method: 'password' });
    const logins = await suite.auditOf(tenant.id, 'UserLogin');
    expect(logins.map((e) => [e.actorId, e.details.method])).toEqual([[user.id, 'password']]);
  });

  it('refuses a suspended user with user_suspended and starts no session', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant, { status: 'Suspended' });
    await expect(suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD }))
      .rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'user_suspended' } });
    expect(await suite.services.sessions.listLive(suite.em(), tenant.id, user.id)).toEqual([]);
  });

  it('refuses a pending (unverified) user with email_not_verified, though the password is right', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant, { status: 'Pending' });
    await expect(suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD }))
      .rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'email_not_verified' } });
    // the credentials themselves verify: only signing in is refused
    await expect(suite.services.auth.verifyCredentials(suite.scope(tenant), user.email, PASSWORD)).resolves.toMatchObject({ id: user.id });
    expect(await suite.services.sessions.listLive(suite.em(), tenant.id, user.id)).toEqual([]);
  });

  it('answers a deleted user as an unknown one: invalid_credentials, audited with no actor', async () => {
    const { tenant, actor } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    await suite.services.accounts.softDelete(suite.scope(tenant, actor), user.id);
    await expect(suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD }))
      .rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'invalid_credentials' } });
    const failures = await suite.auditOf(tenant.id, 'UserLoginFailed');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ actorType: 'system', actorId: null, targetId: null, details: { email: user.email, reason: 'invalid_credentials' } });
  });

  it('audits a wrong password as UserLoginFailed of that user', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    await expect(suite.services.auth.login(suite.scope(tenant), { email: user.email.toUpperCase(), password: `${PASSWORD}!` }))
      .rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'invalid_credentials' } });
    const failures = await suite.auditOf(tenant.id, 'UserLoginFailed');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      actorType: 'user', actorId: user.id, targetId: user.id, ip: suite.meta.ip, details: { email: user.email, reason: 'invalid_credentials' },
    });
    expect(await suite.auditOf(tenant.id, 'UserLogin')).toEqual([]);
  });

  it('starts no session when the password changed between the check and the session (completeSignIn)', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    const checked = await suite.services.auth.verifySignInCredentials(suite.scope(tenant), user.email, PASSWORD);
    await updatePasswordHash(suite.em(), tenant.id, user.id, await hashPassword(`${PASSWORD} reset`));
    await expect(suite.services.auth.completeSignIn(suite.scope(tenant), checked, 'password'))
      .rejects.toMatchObject({ details: { reason: 'invalid_credentials' } });
    expect(await suite.services.sessions.listLive(suite.em(), tenant.id, user.id)).toEqual([]);
  });
});
