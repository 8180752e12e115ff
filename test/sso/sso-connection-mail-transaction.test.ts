import { describe, expect, it } from 'vitest';
import { EmailOtpService } from '../../src/services/mfa/email-otp-service.js';
import { SsoConnectionNotifier } from '../../src/services/sso/sso-connection-notice.js';
import { SsoConnectionService } from '../../src/services/sso/sso-connection-service.js';
import { findLiveTenantBySlug } from '../../src/queries/tenant.js';
import { findLiveUserById } from '../../src/queries/user.js';
import { IdpProviderClient } from '../../src/services/idp/idp-provider-client.js';
import { pino } from 'pino';
import { createTenant, PASSWORD, unique } from '../helpers/api.js';
import { forgingIdp } from '../helpers/saml-forge.js';
import { refusingMailer } from '../helpers/refusing-mailer.js';
import { useTestServer } from '../helpers/suite.js';
import { userActor } from '../../src/lib/request-scope.js';

/**
 * Below HTTP: a change and the mail it causes commit together (docs/events.md "Mail"). The services
 * run with the instance's real database and audit, and a mailer whose queue refuses the mail: the
 * SSO connection (whose notice goes to the other Admins) and the emailed sign-in code are not left
 * behind; with the real mailer both are stored and the mail is queued.
 */

const suite = useTestServer();

describe('mail queued in the transaction of its change', () => {
  it('leaves no SSO connection and no audit entry when the notice to the other Admins cannot be queued', async () => {
    const { api, server } = suite;
    const { services } = server;
    const tenant = await createTenant(api);
    // a second Admin, who is owed the notice
    const second = `second-admin-${unique()}@example.com`;
    const invited = await api.post(`/v1/${tenant.slug}/invites`, { email: second, role: 'Admin' }, { token: tenant.accessToken });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    expect((await api.post('/v1/invites/accept', { token: invited.body.token, password: PASSWORD })).status).toBe(200);

    const sessions = await api.get(`/v1/${tenant.slug}/me/sessions`, { token: tenant.accessToken });
    const sessionId = (sessions.body.items as { id: string; current: boolean }[]).find((s) => s.current)!.id;
    const em = services.orm.em.fork();
    const row = (await findLiveTenantBySlug(em, tenant.slug))!;
    const idp = forgingIdp();
    const input = {
      name: 'Corp', protocol: 'saml' as const, domains: [`corp-${unique()}.example`],
      saml: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem },
    };
    const by = { userId: tenant.adminId, sessionId };
    const scope = { em, tenant: row, actor: userActor(tenant.adminId), meta: { ip: '203.0.113.9', userAgent: 'vitest' } };
    const provider = new IdpProviderClient(pino({ level: 'silent' }), { defaultIssuer: services.config.idpIssuer, allowPrivateIssuers: services.config.idpAllowPrivateIssuers });
    const refusing = new SsoConnectionService(
      services.config, services.keyring, provider, services.organizationRoles, services.audit, new SsoConnectionNotifier(refusingMailer(services.mailer)),
    );
    await expect(refusing.create(scope, input, by)).rejects.toThrow('the job queue refused the mail');

    const list = await api.get(`/v1/${tenant.slug}/sso-connections`, { token: tenant.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    const audit = await api.get(`/v1/${tenant.slug}/audit?action=SsoConnectionCreated`, { token: tenant.accessToken });
    expect(audit.body.items).toEqual([]);

    const created = await services.ssoConnections.create(scope, input, by);
    const after = await api.get(`/v1/${tenant.slug}/sso-connections`, { token: tenant.accessToken });
    expect((after.body.items as { id: string }[]).map((c) => c.id)).toEqual([created.id]);
  });

  it('leaves no open emailed code when its mail cannot be queued; with the mail queued the code signs in', async () => {
    const { api, server } = suite;
    const { services } = server;
    const tenant = await createTenant(api);
    const em = services.orm.em.fork();
    const row = (await findLiveTenantBySlug(em, tenant.slug))!;
    const user = (await findLiveUserById(em, row.id, tenant.adminId))!;
    const meta = { ip: '203.0.113.9', userAgent: 'vitest' };

    const refusing = new EmailOtpService(services.config, refusingMailer(services.mailer), services.audit);
    await expect(refusing.send({ em, tenant: row, meta }, user)).rejects.toThrow('the job queue refused the mail');
    const sent = await api.get(`/v1/${tenant.slug}/audit?action=MfaEmailOtpSent`, { token: tenant.accessToken });
    expect(sent.body.items).toEqual([]);
    // no code was left open: any guess finds none
    const failed = await api.get(`/v1/${tenant.slug}/audit?action=MfaEmailOtpFailed`, { token: tenant.accessToken });
    expect(failed.body.items).toEqual([]);
    expect(await services.emailOtp.verify({ em, tenant: row, meta }, user, '000000')).toBe(false);
    const afterGuess = await api.get(`/v1/${tenant.slug}/audit?action=MfaEmailOtpFailed`, { token: tenant.accessToken });
    expect(afterGuess.body.items.map((e: { details: { reason: string } }) => e.details.reason)).toEqual(['no_open_code']);

    await services.emailOtp.send({ em, tenant: row, meta }, user);
    const queued = await api.get(`/v1/${tenant.slug}/audit?action=MfaEmailOtpSent`, { token: tenant.accessToken });
    expect(queued.body.items).toHaveLength(1);
  });
});
