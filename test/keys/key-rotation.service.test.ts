import { describe, expect, it } from 'vitest';
import { parseKeyring } from '../../src/config.js';
import { Keyring } from '../../src/security/keyring.js';
import { findSealedJobs } from '../../src/queries/job.js';
import { queuedMailAad } from '../../src/services/mail/mailer.js';
import { reencryptSecrets } from '../../src/services/keys/key-rotation.js';
import { findEndpointCiphertexts } from '../../src/queries/webhook-endpoint.js';
import { secretAad } from '../../src/services/webhooks/webhook-service.js';
import { unique } from '../helpers/api.js';
import { TEST_ENCRYPTION_KEYS } from '../helpers/server.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: key rotation (`npm run keys:rotate`, src/services/keys/key-rotation.ts) re-encrypts a
 * tenant's secrets and the file's queued mails under the newest key of the ring, keeping what they
 * say; a second run changes nothing. Scoped to this file's tenant and queue, so other test files
 * sharing the database keep their ciphertexts.
 */

const suite = useServices();
const NEW_KEY = `v2:${Buffer.alloc(32, 9).toString('base64')}`;

describe('reencryptSecrets', () => {
  it('moves a webhook secret, signing keys and a queued mail to the new key, readable with it alone', async () => {
    const { tenant, actor } = await suite.createTenant();
    await suite.takeQueued();
    const { webhook, secret } = await suite.services.webhooks.create(suite.scope(tenant, actor), 'https://hooks.example.com/rotate', null);
    await suite.services.signingKeys.keysOf(suite.em(), tenant.id);
    const email = `rotated-${unique()}@example.com`;
    await suite.services.invites.create(suite.scope(tenant, actor), { email }, () => undefined);

    const rotated = new Keyring(parseKeyring(`${TEST_ENCRYPTION_KEYS},${NEW_KEY}`));
    const newOnly = new Keyring(parseKeyring(NEW_KEY));
    const scope = { tenantId: tenant.id, queue: suite.config.jobQueue };
    const report = await reencryptSecrets(suite.em(), rotated, scope);
    expect(report).toMatchObject({ keyVersion: 'v2', webhookSecrets: 1, queuedMails: 1, failures: [] });
    expect(report.oidcSigningKeys).toBeGreaterThan(0);

    const endpoint = (await findEndpointCiphertexts(suite.em(), tenant.id))[0]!;
    expect(endpoint.secretEncrypted.startsWith('v2:')).toBe(true);
    expect(newOnly.decrypt(endpoint.secretEncrypted, secretAad(webhook.id))).toBe(secret);
    expect(() => suite.services.keyring.decrypt(endpoint.secretEncrypted, secretAad(webhook.id))).toThrow();

    const mail = (await findSealedJobs(suite.em(), '00000000-0000-0000-0000-000000000000', 10, suite.config.jobQueue))[0]!;
    expect(mail.sealed?.startsWith('v2:')).toBe(true);
    expect(JSON.parse(newOnly.decrypt(mail.sealed!, queuedMailAad(mail.id)))).toMatchObject({ to: email, tenantId: tenant.id });

    // again: nothing left to move
    expect(await reencryptSecrets(suite.em(), rotated, scope)).toMatchObject({ webhookSecrets: 0, queuedMails: 0, oidcSigningKeys: 0, failures: [] });

    // and back under v1 (the key this file's services hold), which reads them as before
    const back = await reencryptSecrets(suite.em(), new Keyring(parseKeyring(`${NEW_KEY},${TEST_ENCRYPTION_KEYS}`)), scope);
    expect(back).toMatchObject({ keyVersion: 'v1', webhookSecrets: 1, queuedMails: 1 });
    const { mail: delivered } = await suite.takeQueued();
    expect(delivered.map((m) => m.to)).toEqual([email]);
  });

  it('reports a ciphertext it cannot read and leaves it as it is', async () => {
    const { tenant, actor } = await suite.createTenant();
    await suite.services.webhooks.create(suite.scope(tenant, actor), 'https://hooks.example.com/stuck', null);
    const before = (await findEndpointCiphertexts(suite.em(), tenant.id))[0]!;
    const report = await reencryptSecrets(suite.em(), new Keyring(parseKeyring(NEW_KEY)), { tenantId: tenant.id });
    expect(report.webhookSecrets).toBe(0);
    expect(report.failures).toContainEqual({ kind: 'webhook_secret', id: before.id });
    const after = (await findEndpointCiphertexts(suite.em(), tenant.id))[0]!;
    expect(after.secretEncrypted).toBe(before.secretEncrypted);
  });
});
