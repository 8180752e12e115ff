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
    const all = await suite.services.webhooks.create(suite.scope(tenant, actor), 'https://hooks.example.com/all', null);
    const orgs = await suite.services.webhooks.create(suite.scope(tenant, actor), 'https://hooks.example.com/orgs', ['OrganizationCreated']);
    await suite.services.webhooks.create(suite.scope(tenant, actor), 'https://hooks.example.com/keys', ['ApiKeyCreated']);
    await suite.takeQueued();

    await expect(suite.em().transactional(async (tx) => {
      await suite.services.organizations.create({ em: tx, tenant, actor, meta: suite.meta }, { name: 'Rolled back' });
      throw new Error('the caller failed after the change');
    })).rejects.toThrow('the caller failed');
    expect((await suite.takeQueued()).jobs).toEqual([]);

    const organization = await suite.services.organizations.create(suite.scope(tenant, actor), { name: 'Acme' });
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
    const { webhook } = await suite.services.webhooks.create(suite.scope(first.tenant, first.actor), 'https://hooks.example.com/a', null);
    await suite.services.webhooks.update(suite.scope(first.tenant, first.actor), webhook.id, { enabled: false });
    await suite.takeQueued();
    await suite.services.organizations.create(suite.scope(first.tenant, first.actor), { name: 'Quiet' });
    await suite.services.organizations.create(suite.scope(second.tenant, second.actor), { name: 'Elsewhere' });
    expect((await suite.takeQueued()).jobs).toEqual([]);
  });

  it('refuses an endpoint on a private address', async () => {
    const { tenant, actor } = await suite.createTenant();
    await expect(suite.services.webhooks.create(suite.scope(tenant, actor), 'https://169.254.169.254/latest', null))
      .rejects.toMatchObject({ details: { reason: 'invalid_webhook_url' } });
  });
});
