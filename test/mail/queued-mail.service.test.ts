import { describe, expect, it } from 'vitest';
import { findSealedJobs } from '../../src/queries/job.js';
import { unique } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the mailer queues in the caller's transaction, sealed (Mailer.send, docs/events.md
 * "Mail"), in the language the request, the person or the workspace names (Mailer.contextFor), and
 * the account-mail requests do the look-up in the worker (AccountMailRequests).
 */

const suite = useServices();
const FIRST_JOB = '00000000-0000-0000-0000-000000000000';

describe('Mailer', () => {
  it('queues a mail only when the caller\'s transaction commits, sealed with the keyring', async () => {
    const { tenant } = await suite.createTenant();
    await suite.takeQueued();
    const to = `sealed-${unique()}@example.com`;
    const message = { to, subject: 'A code inside', text: 'code 123456', html: '<p>code 123456</p>' };
    await expect(suite.em().transactional(async (tx) => {
      await suite.services.mailer.send(message, tenant.id, tx);
      throw new Error('the change failed');
    })).rejects.toThrow('the change failed');
    expect((await suite.takeQueued()).mail).toEqual([]);

    await suite.em().transactional((tx) => suite.services.mailer.send(message, tenant.id, tx));
    const [sealed] = await findSealedJobs(suite.em(), FIRST_JOB, 10, suite.config.jobQueue);
    expect(sealed?.sealed).toMatch(/^v1:/);
    expect(sealed?.sealed).not.toContain(to);
    expect(sealed?.sealed).not.toContain('123456');
    expect((await suite.takeQueued()).mail).toEqual([{ ...message, tenantId: tenant.id }]);
  });

  it('speaks the request\'s language first, then the person\'s, then the workspace\'s', async () => {
    const { tenant } = await suite.createTenant();
    expect(suite.services.mailer.contextFor(tenant, 'a@example.com', 'fr', 'de').locale).toBe('fr');
    expect(suite.services.mailer.contextFor(tenant, 'a@example.com', undefined, 'de').locale).toBe('de');
    expect(suite.services.mailer.contextFor(tenant, 'a@example.com', undefined, null).locale).toBe(tenant.defaultLocale);
    expect(suite.services.mailer.contextFor({ ...tenant, displayName: 'Acme "Ops"' }, 'a@example.com').brand.workspace).toContain('Acme');
  });
});

describe('AccountMailRequests', () => {
  it('queues the same sealed request for any address; the worker half mails only an existing account, in the request\'s language', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    await suite.takeQueued();
    const de = { ...suite.meta, locale: 'de' as const };
    await suite.services.accountMailRequests.enqueue({ em: suite.em(), tenant, meta: de }, 'password_reset', user.email);
    await suite.services.accountMailRequests.enqueue({ em: suite.em(), tenant, meta: de }, 'password_reset', `nobody-${unique()}@example.com`);
    const requests = await suite.takeQueued();
    expect(requests.mail).toEqual([]);
    expect(requests.jobs.map((j) => j.kind)).toEqual(['account-mail.request', 'account-mail.request']);
    for (const job of requests.jobs) expect(JSON.stringify(job.payload)).not.toContain('@example.com');

    for (const job of requests.jobs) await suite.services.accountMailRequests.run(job);
    const { mail } = await suite.takeQueued();
    expect(mail.map((m) => m.to)).toEqual([user.email]);
    expect(mail[0]?.subject).toContain('Setzen Sie Ihr Passwort');
    expect(mail[0]?.text).toContain('/reset-password?token=');
  });

  it('marks the request done in the transaction that queues its mail, so a kill after the commit sends nothing twice', async () => {
    const { tenant } = await suite.createTenant();
    const user = await suite.addUser(tenant);
    await suite.takeQueued();
    await suite.services.accountMailRequests.enqueue({ em: suite.em(), tenant, meta: suite.meta }, 'password_reset', user.email);
    const [request] = await suite.services.jobs.claim('worker-that-dies', 10);
    expect(request?.kind).toBe('account-mail.request');

    // the handler runs and commits; the worker is killed before it records the outcome
    await suite.services.accountMailRequests.run(request!);
    const left = await findSealedJobs(suite.em(), FIRST_JOB, 100, suite.config.jobQueue);
    expect(left.map((j) => j.kind)).toEqual(['mail.send']);
    expect((await suite.takeQueued()).mail.map((m) => m.to)).toEqual([user.email]);
  });
});
