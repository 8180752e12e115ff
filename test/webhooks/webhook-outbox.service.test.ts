import { describe, expect, it } from 'vitest';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: a webhook event is queued in the transaction of the change it reports (the outbox of
 * AuditService.record, docs/events.md "Webhooks"): one `webhook.deliver` job per subscribed enabled
 * endpoint, none for a change that rolled back.
 */

const suite = useServices();

describe('the webhook outbox', () => {
  it('queues one delivery per subscribed endpoint with the change, and none when the change rolls back', async () => {
    const { tenant, actor } = await suite.createTenant();
    const all = await suite.services.webhooks.create(suite.em(), tenant, 'https://hooks.example.com/all', null, actor, suite.meta);
    const orgs = await suite.services.webhooks.create(suite.em(), tenant, 'https://hooks.example.com/orgs', ['OrganizationCreated'], actor, suite.meta);
    await suite.services.webhooks.create(suite.em(), tenant, 'https://hooks.example.com/keys', ['ApiKeyCreated'], actor, suite.meta);
    await suite.takeQueued();

    await expect(suite.em().transactional(async (tx) => {
      await suite.services.organizations.create(tx, tenant.id, { name: 'Rolled back' }, actor, suite.meta);
      throw new Error('the caller failed after the change');
    })).rejects.toThrow('the caller failed');
    expect((await suite.takeQueued()).jobs).toEqual([]);

    const organization = await suite.services.organizations.create(suite.em(), tenant.id, { name: 'Acme' }, actor, suite.meta);
    const { jobs } = await suite.takeQueued();
    const [event] = await suite.auditOf(tenant.id, 'OrganizationCreated');
    expect(event?.targetId).toBe(organization.id);
    expect(jobs.map((j) => j.kind)).toEqual(['webhook.deliver', 'webhook.deliver']);
    expect(jobs.map((j) => j.payload.endpointId).sort()).toEqual([all.webhook.id, orgs.webhook.id].sort());
    for (const job of jobs) expect(job.payload).toMatchObject({ tenantId: tenant.id, eventType: 'OrganizationCreated', auditEventId: event?.id });
  });

  it('queues nothing for a disabled endpoint, nor for another workspace\'s endpoint', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    const { webhook } = await suite.services.webhooks.create(suite.em(), first.tenant, 'https://hooks.example.com/a', null, first.actor, suite.meta);
    await suite.services.webhooks.update(suite.em(), first.tenant, webhook.id, { enabled: false }, first.actor, suite.meta);
    await suite.takeQueued();
    await suite.services.organizations.create(suite.em(), first.tenant.id, { name: 'Quiet' }, first.actor, suite.meta);
    await suite.services.organizations.create(suite.em(), second.tenant.id, { name: 'Elsewhere' }, second.actor, suite.meta);
    expect((await suite.takeQueued()).jobs).toEqual([]);
  });

  it('refuses an endpoint on a private address', async () => {
    const { tenant, actor } = await suite.createTenant();
    await expect(suite.services.webhooks.create(suite.em(), tenant, 'https://169.254.169.254/latest', null, actor, suite.meta))
      .rejects.toMatchObject({ details: { reason: 'invalid_webhook_url' } });
  });
});
