import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/entities/tenant.js';
import type { User } from '../../src/entities/user.js';
import { findLiveUserById } from '../../src/queries/user.js';
import { PASSWORD } from '../helpers/api.js';
import { Authenticator } from '../helpers/totp.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: TOTP enrolment and login codes (TotpService) and single-use recovery codes
 * (RecoveryCodeService; docs/mfa.md): a code is accepted once, a recovery code is spent once even by
 * two concurrent sign-ins, and the factor's secret is stored only encrypted.
 */

const suite = useServices();
const STEP_MS = 30_000;

async function reload(tenant: Tenant, user: User): Promise<User> {
  return (await findLiveUserById(suite.em(), tenant.id, user.id))!;
}

/** Enrols TOTP for a new user: confirmed with the code of the current step. */
async function enrolled(): Promise<{ tenant: Tenant; user: User; authenticator: Authenticator; step: number; recoveryCodes: string[] }> {
  const { tenant } = await suite.createTenant();
  const member = await suite.addUser(tenant);
  const { secret } = await suite.services.totp.startEnrollment(suite.em(), tenant, member);
  const pending = await reload(tenant, member);
  expect(pending.totpPendingSecretEnc).toMatch(/^v1:/);
  expect(pending.totpPendingSecretEnc).not.toContain(secret);
  const authenticator = new Authenticator(secret);
  const step = Math.floor(Date.now() / STEP_MS);
  const actor = { type: 'user' as const, id: member.id };
  const recoveryCodes = await suite.services.totp.confirmEnrollment(suite.scope(tenant, actor), pending, authenticator.codeAt(step));
  return { tenant, user: await reload(tenant, member), authenticator, step, recoveryCodes };
}

describe('TOTP', () => {
  it('enrols with a code, refuses that code at login, accepts a later one once', async () => {
    const { tenant, user, authenticator, step } = await enrolled();
    expect(user.totpEnrolledAt).not.toBeNull();
    expect(await suite.services.totp.verifyLoginCode(suite.scope(tenant), user, authenticator.codeAt(step))).toBe(false);
    const next = authenticator.codeAt(step + 1);
    expect(await suite.services.totp.verifyLoginCode(suite.scope(tenant), await reload(tenant, user), next)).toBe(true);
    expect(await suite.services.totp.verifyLoginCode(suite.scope(tenant), await reload(tenant, user), next)).toBe(false);
    expect(await suite.services.totp.verifyLoginCode(suite.scope(tenant), await reload(tenant, user), authenticator.codeAt(step + 5))).toBe(false);
    expect(await suite.auditOf(tenant.id, 'MfaTotpVerified')).toHaveLength(1);
  });

  it('asks the password sign-in for a code once enrolled (mfa_required), and mails the factor notice', async () => {
    const { tenant, user } = await enrolled();
    const { mail } = await suite.takeQueued();
    expect(mail.map((m) => m.to)).toContain(user.email);
    await expect(suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD }))
      .rejects.toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'mfa_required' } });
    expect(await suite.services.sessions.listLive(suite.em(), tenant.id, user.id)).toEqual([]);
    await expect(suite.services.totp.startEnrollment(suite.em(), tenant, user)).rejects.toMatchObject({ details: { reason: 'totp_already_enrolled' } });
  });
});

describe('recovery codes', () => {
  it('spends a code exactly once under two concurrent sign-ins', async () => {
    const { tenant, user, recoveryCodes } = await enrolled();
    expect(recoveryCodes.length).toBeGreaterThan(1);
    expect(await suite.services.recoveryCodes.remaining(suite.em(), tenant.id, user.id)).toBe(recoveryCodes.length);
    const [code] = recoveryCodes;
    const results = await Promise.all([
      suite.services.recoveryCodes.consume(suite.scope(tenant), user, code!),
      suite.services.recoveryCodes.consume(suite.scope(tenant), user, code!),
    ]);
    expect(results.sort()).toEqual([false, true]);
    expect(await suite.services.recoveryCodes.remaining(suite.em(), tenant.id, user.id)).toBe(recoveryCodes.length - 1);
    expect((await suite.auditOf(tenant.id, 'MfaRecoveryCodeUsed'))[0]?.details).toEqual({ remaining: recoveryCodes.length - 1 });
  });

  it('accepts a code only for its own user', async () => {
    const first = await enrolled();
    const second = await enrolled();
    expect(await suite.services.recoveryCodes.consume(suite.scope(second.tenant), second.user, first.recoveryCodes[0]!)).toBe(false);
    expect(await suite.services.recoveryCodes.consume(suite.scope(first.tenant), first.user, first.recoveryCodes[0]!)).toBe(true);
  });

  it('removes the factor and every code when an admin disables TOTP', async () => {
    const { tenant, user, recoveryCodes } = await enrolled();
    await suite.services.totp.disable(suite.scope(tenant), user.id);
    expect((await reload(tenant, user)).totpSecretEnc).toBeNull();
    expect(await suite.services.recoveryCodes.remaining(suite.em(), tenant.id, user.id)).toBe(0);
    expect(await suite.services.recoveryCodes.consume(suite.scope(tenant), user, recoveryCodes[1]!)).toBe(false);
  });
});
