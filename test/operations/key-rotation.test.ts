import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyring } from '../../src/security/keyring.js';
import { idpClientSecretAssociatedData } from '../../src/services/idp/idp-service.js';
import { reencryptSecrets } from '../../src/services/keys/key-rotation.js';
import { ssoClientSecretAssociatedData, ssoSpKeyAssociatedData } from '../../src/services/sso/sso-connection-service.js';
import { mailRecipientDigests, queuedMailAad } from '../../src/services/mail/mailer.js';
import { totpSecretAad } from '../../src/services/mfa/totp-service.js';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Api, createTenant, PASSWORD, signupMember, unique } from '../helpers/api.js';
import { startTestServer, TEST_ENCRYPTION_KEYS, type TestServer } from '../helpers/server.js';
import { Authenticator } from '../helpers/totp.js';

/** The test keyring (v1) plus a new v2 key. */
const ROTATED_KEYS = `${TEST_ENCRYPTION_KEYS},v2:${Buffer.alloc(32, 9).toString('base64')}`;

let oldServer: TestServer;
let newServer: TestServer;

beforeAll(async () => {
  oldServer = await startTestServer();
  newServer = await startTestServer({ ENCRYPTION_KEYS: ROTATED_KEYS });
});
afterAll(async () => {
  await oldServer.close();
  await newServer.close();
});

interface SecretsRow {
  totp_secret_enc: string | null;
  totp_pending_secret_enc: string | null;
}

async function userSecrets(userId: string): Promise<SecretsRow> {
  const [row] = (await newServer.services.orm.em
    .fork()
    .execute('select totp_secret_enc, totp_pending_secret_enc from app_user where id = ?', [userId])) as SecretsRow[];
  return row!;
}

describe('ENCRYPTION_KEYS rotation', () => {
  it('keeps v1 secrets readable after v2 is added, and moves every secret of the tenant to v2', async () => {
    const oldApi = new Api(oldServer.url);
    const newApi = new Api(newServer.url);
    const tenant = await createTenant(oldApi);

    // Under v1: one member with an active TOTP factor, one with a pending enrollment, and an IdP secret.
    const enrolled = await signupMember(oldApi, tenant.slug);
    const enroll = await oldApi.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: enrolled.accessToken });
    const authenticator = new Authenticator(enroll.body.secret);
    const verify = await oldApi.post(`/v1/${tenant.slug}/mfa/totp/verify`, { code: await authenticator.nextCode() }, { token: enrolled.accessToken });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    const pending = await signupMember(oldApi, tenant.slug);
    const pendingEnroll = await oldApi.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: pending.accessToken });
    expect(pendingEnroll.status).toBe(200);
    const idpSecret = 'idp-client-secret-value';
    const em = newServer.services.orm.em.fork();
    await em.execute('update tenant set idp_client_secret_enc = ? where id = ?', [
      oldServer.services.keyring.encrypt(idpSecret, idpClientSecretAssociatedData(tenant.id)), tenant.id,
    ]);
    expect((await userSecrets(enrolled.id)).totp_secret_enc).toMatch(/^v1:/);
    expect((await userSecrets(pending.id)).totp_pending_secret_enc).toMatch(/^v1:/);
    // and a webhook signing secret (no event of this test is subscribed, nothing is delivered)
    const hook = await oldApi.post(`/v1/${tenant.slug}/webhooks`, { url: 'https://hooks.example.com/in', eventTypes: ['InviteExpired'] }, { token: tenant.accessToken });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const hookSecret = async () =>
      ((await em.execute('select secret_encrypted from webhook_endpoint where id = ?', [hook.body.webhook.id])) as { secret_encrypted: string }[])[0]!.secret_encrypted;
    expect(await hookSecret()).toMatch(/^v1:/);
    // and an application of the tenant's OpenID provider, with its client secret and a signing key
    const app = await oldApi.post(`/v1/${tenant.slug}/applications`, { name: 'Backend', type: 'm2m' }, { token: tenant.accessToken });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    await oldServer.services.signingKeys.keysOf(oldServer.services.orm.em.fork(), tenant.id);
    // and an OpenID Connect SSO connection's client secret (docs/sso.md)
    const connectionId = randomUUID();
    await em.execute(
      `insert into sso_connection (id, tenant_id, name, protocol, oidc_issuer, oidc_client_id, oidc_client_secret_enc, created_at, updated_at)
       values (?, ?, 'Corp', 'oidc', 'https://login.example.com', 'corp-client', ?, now(), now())`,
      [connectionId, tenant.id, oldServer.services.keyring.encrypt('sso-client-secret-value', ssoClientSecretAssociatedData(tenant.id, connectionId))],
    );
    // and a SAML connection's SP private key
    const samlConnectionId = randomUUID();
    await em.execute(
      `insert into sso_connection (id, tenant_id, name, protocol, saml_idp_entity_id, saml_sso_url, saml_certificates, sp_private_key_enc, sp_certificate, created_at, updated_at)
       values (?, ?, 'Corp SAML', 'saml', 'https://idp.example.com', 'https://idp.example.com/sso', '[]', ?, 'certificate', now(), now())`,
      [samlConnectionId, tenant.id, oldServer.services.keyring.encrypt('sp-private-key-pem', ssoSpKeyAssociatedData(tenant.id, samlConnectionId))],
    );

    // The service with v1,v2 still reads the v1 secret.
    const beforeRotation = await newApi.post(`/v1/${tenant.slug}/auth/login`, {
      email: enrolled.email, password: PASSWORD, totpCode: await authenticator.nextCode(),
    });
    expect(beforeRotation.status, JSON.stringify(beforeRotation.body)).toBe(200);

    // Rotation, scoped to this tenant so test files running beside this one keep their v1 rows.
    // oidcSigningKeys: the live RS256 and ES256 keys of the tenant
    const report = await reencryptSecrets(em, newServer.services.keyring, { tenantId: tenant.id });
    expect(report).toEqual({
      keyVersion: 'v2', totpSecrets: 1, pendingTotpSecrets: 1, idpClientSecrets: 1, webhookSecrets: 1, applicationSecrets: 1, oidcSigningKeys: 2, ssoClientSecrets: 1,
      ssoSpKeys: 1, queuedMails: 0, failures: [],
    });
    const [connectionRow] = (await em.execute('select oidc_client_secret_enc from sso_connection where id = ?', [connectionId])) as { oidc_client_secret_enc: string }[];
    expect(new Keyring([{ version: 'v2', key: Buffer.alloc(32, 9) }]).decrypt(connectionRow!.oidc_client_secret_enc, ssoClientSecretAssociatedData(tenant.id, connectionId)))
      .toBe('sso-client-secret-value');
    const [spRow] = (await em.execute('select sp_private_key_enc from sso_connection where id = ?', [samlConnectionId])) as { sp_private_key_enc: string }[];
    expect(new Keyring([{ version: 'v2', key: Buffer.alloc(32, 9) }]).decrypt(spRow!.sp_private_key_enc, ssoSpKeyAssociatedData(tenant.id, samlConnectionId)))
      .toBe('sp-private-key-pem');
    expect(await hookSecret()).toMatch(/^v2:/);
    const [appRow] = (await em.execute('select client_secret_enc from oidc_application where id = ?', [app.body.application.id])) as { client_secret_enc: string }[];
    expect(appRow!.client_secret_enc).toMatch(/^v2:/);

    const active = (await userSecrets(enrolled.id)).totp_secret_enc!;
    const pendingEnc = (await userSecrets(pending.id)).totp_pending_secret_enc!;
    expect(active).toMatch(/^v2:/);
    expect(pendingEnc).toMatch(/^v2:/);
    const v2Only = new Keyring([{ version: 'v2', key: Buffer.alloc(32, 9) }]);
    expect(v2Only.decrypt(active, totpSecretAad(enrolled.id))).toBe(enroll.body.secret);
    expect(v2Only.decrypt(pendingEnc, totpSecretAad(pending.id))).toBe(pendingEnroll.body.secret);
    const [tenantRow] = (await em.execute('select idp_client_secret_enc from tenant where id = ?', [tenant.id])) as { idp_client_secret_enc: string }[];
    expect(tenantRow!.idp_client_secret_enc).toMatch(/^v2:/);
    expect(v2Only.decrypt(tenantRow!.idp_client_secret_enc, idpClientSecretAssociatedData(tenant.id))).toBe(idpSecret);

    // Logins keep working on the rotated secret; a second run has nothing left to do.
    const afterRotation = await newApi.post(`/v1/${tenant.slug}/auth/login`, {
      email: enrolled.email, password: PASSWORD, totpCode: await authenticator.nextCode(),
    });
    expect(afterRotation.status, JSON.stringify(afterRotation.body)).toBe(200);
    const again = await reencryptSecrets(em, newServer.services.keyring, { tenantId: tenant.id });
    expect(again).toEqual({
      keyVersion: 'v2', totpSecrets: 0, pendingTotpSecrets: 0, idpClientSecrets: 0, webhookSecrets: 0, applicationSecrets: 0, oidcSigningKeys: 0, ssoClientSecrets: 0,
      ssoSpKeys: 0, queuedMails: 0, failures: [],
    });
  });

  it('reports, and leaves alone, secrets whose key is missing from the ring', async () => {
    const api = new Api(oldServer.url);
    const tenant = await createTenant(api);
    const enroll = await api.post(`/v1/${tenant.slug}/mfa/totp/enroll`, undefined, { token: tenant.accessToken });
    expect(enroll.status).toBe(200);
    const em = oldServer.services.orm.em.fork();
    const before = await userSecrets(tenant.adminId);

    const withoutV1 = new Keyring([{ version: 'v3', key: Buffer.alloc(32, 3) }]);
    const report = await reencryptSecrets(em, withoutV1, { tenantId: tenant.id });
    expect(report.failures).toEqual([{ kind: 'pending_totp_secret', id: tenant.adminId }]);
    expect(report.pendingTotpSecrets).toBe(0);
    expect(await userSecrets(tenant.adminId)).toEqual(before);
  });

  it('re-encrypts the mails waiting in the queue under the new key, so a worker with the new key alone still sends them and erasure still finds them', async () => {
    // an instance under v1 whose worker is off: the invite mail it queues waits
    const stalled = await startTestServer({ JOB_WORKER: 'false' });
    let drain: TestServer | undefined;
    try {
      const api = new Api(stalled.url);
      const tenant = await createTenant(api);
      const email = `invitee-${unique()}@example.com`;
      const invite = await api.post(`/v1/${tenant.slug}/invites`, { email }, { token: tenant.accessToken });
      expect(invite.status, JSON.stringify(invite.body)).toBe(200);
      // and an existence-blind request (its email, IP and user agent sealed too) for the admin
      expect((await api.post(`/v1/${tenant.slug}/auth/password-reset/request`, { email: tenant.adminEmail })).status).toBe(200);
      const queue = stalled.services.jobs.name;
      const em = stalled.services.orm.em.fork();
      const requestRow = async () =>
        ((await em.execute(`select payload->>'sealed' as sealed, recipient_digest from job where queue = ? and kind = 'account-mail.request'`, [queue])) as {
          sealed: string; recipient_digest: string;
        }[])[0]!;
      expect((await requestRow()).sealed).toMatch(/^v1:/);
      const mailRow = async () =>
        // the newest: the invite's (the creator's verification mail, queued at creation, waits too)
        ((await em.execute(`select id, payload->>'sealed' as sealed, recipient_digest from job where queue = ? and kind = 'mail.send' order by created_at desc limit 1`, [queue])) as {
          id: string; sealed: string; recipient_digest: string;
        }[]);
      const [before] = await mailRow();
      expect(before!.sealed).toMatch(/^v1:/);
      expect(before!.recipient_digest).toMatch(/^v1:/);
      expect(before!.sealed).not.toContain(email);

      const report = await reencryptSecrets(em, newServer.services.keyring, { queue });
      // the creator's verification mail, the invite and the sealed reset request
      expect(report).toMatchObject({ keyVersion: 'v2', queuedMails: 3, failures: [] });
      expect((await requestRow()).sealed).toMatch(/^v2:/);
      expect(mailRecipientDigests(new Keyring([{ version: 'v2', key: Buffer.alloc(32, 9) }]), tenant.id, tenant.adminEmail)).toContain((await requestRow()).recipient_digest);
      const [after] = await mailRow();
      expect(after!.id).toBe(before!.id);
      expect(after!.sealed).toMatch(/^v2:/);
      const v2Only = new Keyring([{ version: 'v2', key: Buffer.alloc(32, 9) }]);
      expect(v2Only.decrypt(after!.sealed, queuedMailAad(after!.id))).toContain(invite.body.token as string);
      // erasure computes digests with the keys it has: v2 alone finds the re-digested row
      expect(mailRecipientDigests(v2Only, tenant.id, email)).toContain(after!.recipient_digest);
      expect((await reencryptSecrets(em, newServer.services.keyring, { queue })).queuedMails).toBe(0);

      // a worker holding only v2 (v1 retired) on that queue delivers the mail, and runs the request (which mails the admin)
      drain = await startTestServer({ ENCRYPTION_KEYS: `v2:${Buffer.alloc(32, 9).toString('base64')}`, JOB_QUEUE: queue, SMTP_URL: undefined });
      const outbox = path.join(drain.services.config.dataDir, 'outbox');
      const started = Date.now();
      const delivered = () => existsSync(outbox) && readdirSync(outbox).some((f) => f.endsWith('.eml') && readFileSync(path.join(outbox, f), 'utf8').includes(email));
      // a mail is written as `.eml.tmp` and renamed: only finished ones are read
      const resetMailed = () => existsSync(outbox) && readdirSync(outbox).some((f) => {
        if (!f.endsWith('.eml')) return false;
        const text = readFileSync(path.join(outbox, f), 'utf8');
        return text.includes(tenant.adminEmail) && text.includes('reset-password');
      });
      while (!(delivered() && resetMailed()) && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 25));
      expect(delivered()).toBe(true);
      expect(resetMailed()).toBe(true);
    } finally {
      await drain?.close();
      await stalled.close();
    }
  });
});
