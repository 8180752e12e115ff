import { describe, expect, it } from 'vitest';
import { createTenant, expectError, signupMember, unique } from '../helpers/api.js';
import { forgingIdp } from '../helpers/saml-forge.js';
import { useTestServer } from '../helpers/suite.js';

/**
 * Who may change an SSO connection (docs/sso.md "Who may change a connection"): a connection decides
 * who signs in for its domains, so a change needs a recent sign-in and every other Admin hears of it.
 */
const suite = useTestServer({ smtp: true });

async function sql<T>(query: string, params: unknown[]): Promise<T[]> {
  return (await suite.server.services.orm.em.fork().execute(query, params)) as T[];
}

describe('changing an SSO connection', () => {
  it('needs a sign-in less than 10 minutes old, and is mailed to the other Admins with who did it, never to the one who did', async () => {
    const tenant = await createTenant(suite.api);
    const second = await signupMember(suite.api, tenant.slug);
    await sql(`update app_user set role = 'Admin' where id = ?`, [second.id]);
    const idp = forgingIdp();
    const domain = `corp-${unique()}.example`;
    const body = { name: 'Corp', protocol: 'saml', domains: [domain], saml: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem } };

    await sql(`update session set authenticated_at = now() - interval '1 hour' where tenant_id = ?`, [tenant.id]);
    expectError(await suite.api.post(`/v1/${tenant.slug}/sso-connections`, body, { token: tenant.accessToken }), 401, 'UNAUTHORIZED', 'reauthentication_required');
    expect(await sql('select id from sso_connection where tenant_id = ?', [tenant.id])).toHaveLength(0);

    await sql(`update session set authenticated_at = now() where tenant_id = ?`, [tenant.id]);
    const created = await suite.api.post(`/v1/${tenant.slug}/sso-connections`, body, { token: tenant.accessToken });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const mail = await suite.sink.waitFor(second.email, (m) => m.subject.includes('A single sign-on connection was changed'));
    expect(mail.text).toContain(tenant.adminEmail);
    expect(mail.text).toContain(domain.replace(/\./g, '[.]'));
    expect(mail.text).not.toContain(`https://${new URL(idp.entityId).host}`);

    const removed = await suite.api.delete(`/v1/${tenant.slug}/sso-connections/${created.body.connection.id}`, { token: tenant.accessToken });
    expect(removed.status).toBe(200);
    await suite.sink.waitFor(second.email, (m) => m.text.includes('removed the single sign-on connection'));
    expect(suite.sink.messages.filter((m) => m.to.includes(tenant.adminEmail) && m.subject.includes('single sign-on'))).toHaveLength(0);
  });
});
