import { describe, expect, it } from 'vitest';
import type { CapturedMail } from '../helpers/services.js';
import { PASSWORD } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the password-reset link (PasswordResetService over AccountTokenService;
 * docs/lifecycle.md): mailed only for a live account, used once, replaced by a newer one; using it
 * sets the password, ends every session and verifies the address.
 */

const suite = useServices();
const NEW_PASSWORD = 'a completely different passphrase';

function tokenIn(mail: CapturedMail): string {
  const match = /reset-password\?token=([^\s"&<]+)/.exec(mail.text);
  if (!match) throw new Error(`no reset link in: ${mail.text}`);
  return decodeURIComponent(match[1]!);
}

describe('PasswordResetService', () => {
  it('mails a link whose token sets the password once and ends every session', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    await suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD });
    await suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD });
    await suite.takeQueued();

    await suite.services.passwordReset.request(suite.em(), tenant, user.email.toUpperCase());
    const { mail } = await suite.takeQueued();
    expect(mail.map((m) => m.to)).toEqual([user.email]);
    const token = tokenIn(mail[0]!);

    expect(await suite.services.passwordReset.complete(suite.scope(tenant), token, NEW_PASSWORD)).toBe(2);
    expect(await suite.services.sessions.listLive(suite.em(), tenant.id, user.id)).toEqual([]);
    await expect(suite.services.auth.login(suite.scope(tenant), { email: user.email, password: PASSWORD }))
      .rejects.toMatchObject({ details: { reason: 'invalid_credentials' } });
    await expect(suite.services.auth.login(suite.scope(tenant), { email: user.email, password: NEW_PASSWORD })).resolves.toBeDefined();
    await expect(suite.services.passwordReset.complete(suite.scope(tenant), token, `${NEW_PASSWORD} again`))
      .rejects.toMatchObject({ details: { reason: 'invalid_token' } });
    expect((await suite.auditOf(tenant.id, 'UserPasswordChanged'))[0]?.details).toMatchObject({ via: 'password_reset', sessionsEnded: 2 });
  });

  it('mails nothing for an unknown address, and only the newest link works', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    await suite.takeQueued();
    await suite.services.passwordReset.request(suite.em(), tenant, `nobody-${user.email}`);
    expect((await suite.takeQueued()).mail).toEqual([]);

    await suite.services.passwordReset.request(suite.em(), tenant, user.email);
    await suite.services.passwordReset.request(suite.em(), tenant, user.email);
    const [older, newer] = (await suite.takeQueued()).mail.map(tokenIn);
    await expect(suite.services.passwordReset.complete(suite.scope(tenant), older!, NEW_PASSWORD)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(suite.services.passwordReset.complete(suite.scope(tenant), newer!, NEW_PASSWORD)).resolves.toBe(0);
  });

  it('verifies a pending user\'s address with the reset, so they may sign in', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant, { status: 'Pending' });
    await suite.takeQueued();
    await suite.services.passwordReset.request(suite.em(), tenant, user.email);
    const [mail] = (await suite.takeQueued()).mail;
    await suite.services.passwordReset.complete(suite.scope(tenant), tokenIn(mail!), NEW_PASSWORD);
    const { user: signedIn } = await suite.services.auth.login(suite.scope(tenant), { email: user.email, password: NEW_PASSWORD });
    expect(signedIn.status).toBe('Active');
  });
});
