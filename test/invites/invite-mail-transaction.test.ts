import { describe, expect, it } from 'vitest';
import { InviteService } from '../../src/services/invites/invite-service.js';
import { findLiveTenantBySlug } from '../../src/queries/tenant.js';
import { createTenant, unique } from '../helpers/api.js';
import { refusingMailer } from '../helpers/refusing-mailer.js';
import { useTestServer } from '../helpers/suite.js';
import { userActor } from '../../src/lib/request-scope.js';

/**
 * Below HTTP: an invite and its mail commit together (docs/events.md "Mail"). The service runs with
 * the instance's real database, audit and organizations, and a mailer whose queue refuses the mail.
 */

const suite = useTestServer();

describe('InviteService.create', () => {
  it('leaves no invite and no audit entry when its mail cannot be queued, and queues both when it can', async () => {
    const { api, server } = suite;
    const tenant = await createTenant(api);
    const { services } = server;
    const em = services.orm.em.fork();
    const row = await findLiveTenantBySlug(em, tenant.slug);
    const scope = { em, tenant: row!, actor: userActor(tenant.adminId), meta: { ip: '203.0.113.9', userAgent: 'vitest' } };
    const email = `invitee-${unique()}@example.com`;

    const refusing = new InviteService(
      services.config, services.sessions, refusingMailer(services.mailer), services.audit, services.organizationMembers, services.keyring,
    );
    await expect(refusing.create(scope, { email }, () => undefined)).rejects.toThrow('the job queue refused the mail');

    const invites = await api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken });
    expect(invites.status).toBe(200);
    expect((invites.body.items as { email: string }[]).map((i) => i.email)).not.toContain(email);
    const audit = await api.get(`/v1/${tenant.slug}/audit?action=InviteCreated`, { token: tenant.accessToken });
    expect(audit.status).toBe(200);
    expect(audit.body.items).toEqual([]);

    const { invite } = await services.invites.create(scope, { email }, () => undefined);
    const after = await api.get(`/v1/${tenant.slug}/invites`, { token: tenant.accessToken });
    expect((after.body.items as { id: string }[]).map((i) => i.id)).toEqual([invite.id]);
  });
});
