import type { EntityManager } from '@mikro-orm/postgresql';
import type { Keyring } from '../../security/keyring.js';
import { idpClientSecretAssociatedData } from '../idp/idp-service.js';
import { totpSecretAad } from '../mfa/totp-service.js';
import { secretAad as webhookSecretAad } from '../webhooks/webhook-service.js';
import { mailRecipientDigest, queuedMailAad } from '../mail/mailer.js';
import { accountMailRequestAad } from '../mail/account-mail-requests.js';
import { applicationSecretAad } from '../oidc/application-service.js';
import { signingKeyAad } from '../oidc/signing-keys.js';


/** What {@link reencryptSecrets} did. */
export interface ReencryptionReport {
  /** Key version everything was moved to. */
  keyVersion: string;
  /** Ciphertexts rewritten, per kind. */
  totpSecrets: number;
  pendingTotpSecrets: number;
  idpClientSecrets: number;
  /** Webhook signing secrets (current and, during a rotation overlap, previous). */
  webhookSecrets: number;
  /** Client secrets of the tenants' applications (OpenID provider). */
  applicationSecrets: number;
  /** Private signing keys of the tenants' OpenID providers. */
  oidcSigningKeys: number;
  /**
   * Mails and account-mail requests waiting in the job queue (or failed for good and kept), with
   * their recipient digests.
   */
  queuedMails: number;
  /** Ciphertexts that could not be decrypted (key version missing from the ring, or tampered); left as they are. */
  failures: {
    kind: 'totp_secret' | 'pending_totp_secret' | 'idp_client_secret' | 'webhook_secret' | 'queued_mail' | 'application_secret' | 'oidc_signing_key';
    id: string;
  }[];
}

/**
 * Which rows to rotate: every tenant by default, or one tenant (a staged rotation, or a test).
 * Queued mails belong to a queue, not a tenant: they are rotated in every queue when no scope is
 * given, in `queue` only when it is given, and not at all when only `tenantId` is given.
 */
export interface RotationScope {
  tenantId?: string;
  queue?: string;
}

/** Queued mails read per query. */
const MAIL_PAGE_SIZE = 500;

/** Users read per query while walking a tenant. */
const USER_PAGE_SIZE = 500;

interface UserSecretsRow {
  id: string;
  totp_secret_enc: string | null;
  totp_pending_secret_enc: string | null;
}

type Column = 'totp_secret_enc' | 'totp_pending_secret_enc';

/**
 * Key rotation (`npm run keys:rotate`): rewrites every field-encrypted secret made under an older key
 * of the ring (TOTP secrets, pending TOTP secrets, tenants' IdP client secrets, webhook signing
 * secrets, applications' client secrets, OpenID-provider signing keys, mails waiting in the job
 * queue) under the newest key,
 * tenant by tenant (or only `scope.tenantId`). Each row is updated only if its ciphertext is still the one read, so a concurrent
 * enrollment is never overwritten; running it again changes nothing. Safe while the service runs.
 */
export async function reencryptSecrets(em: EntityManager, keyring: Keyring, scope: RotationScope = {}): Promise<ReencryptionReport> {
  const report: ReencryptionReport = {
    keyVersion: keyring.currentVersion, totpSecrets: 0, pendingTotpSecrets: 0, idpClientSecrets: 0, webhookSecrets: 0,
    applicationSecrets: 0, oidcSigningKeys: 0, queuedMails: 0,
    failures: [],
  };

  /** Re-encrypts one ciphertext; null when it is current already or cannot be decrypted (recorded). */
  const rewrap = (ciphertext: string | null, aad: string, kind: ReencryptionReport['failures'][number]['kind'], id: string): string | null => {
    if (ciphertext === null || !keyring.needsReencryption(ciphertext)) return null;
    try {
      return keyring.encrypt(keyring.decrypt(ciphertext, aad), aad);
    } catch {
      report.failures.push({ kind, id });
      return null;
    }
  };

  const tenants = (await em.execute(
    `select id, idp_client_secret_enc from tenant${scope.tenantId ? ' where id = ?' : ''} order by id`,
    scope.tenantId ? [scope.tenantId] : [],
  )) as {
    id: string;
    idp_client_secret_enc: string | null;
  }[];
  for (const tenant of tenants) {
    const idpSecret = rewrap(tenant.idp_client_secret_enc, idpClientSecretAssociatedData(tenant.id), 'idp_client_secret', tenant.id);
    if (idpSecret !== null) {
      const updated = await em.execute('update tenant set idp_client_secret_enc = ? where id = ? and idp_client_secret_enc = ? returning id', [
        idpSecret, tenant.id, tenant.idp_client_secret_enc,
      ]);
      report.idpClientSecrets += updated.length;
    }

    const endpoints = (await em.execute(
      'select id, secret_encrypted, previous_secret_encrypted from webhook_endpoint where tenant_id = ? order by id',
      [tenant.id],
    )) as { id: string; secret_encrypted: string; previous_secret_encrypted: string | null }[];
    for (const endpoint of endpoints) {
      for (const column of ['secret_encrypted', 'previous_secret_encrypted'] as const) {
        const fresh = rewrap(endpoint[column], webhookSecretAad(endpoint.id), 'webhook_secret', endpoint.id);
        if (fresh === null) continue;
        const updated = await em.execute(
          `update webhook_endpoint set ${column} = ? where id = ? and tenant_id = ? and ${column} = ? returning id`,
          [fresh, endpoint.id, tenant.id, endpoint[column]],
        );
        report.webhookSecrets += updated.length;
      }
    }

    const applications = (await em.execute('select id, client_secret_enc from oidc_application where tenant_id = ? and client_secret_enc is not null order by id', [
      tenant.id,
    ])) as { id: string; client_secret_enc: string }[];
    for (const app of applications) {
      const fresh = rewrap(app.client_secret_enc, applicationSecretAad(app.id), 'application_secret', app.id);
      if (fresh === null) continue;
      const updated = await em.execute('update oidc_application set client_secret_enc = ? where id = ? and tenant_id = ? and client_secret_enc = ? returning id', [
        fresh, app.id, tenant.id, app.client_secret_enc,
      ]);
      report.applicationSecrets += updated.length;
    }
    const signingKeys = (await em.execute('select kid, private_jwk_enc from oidc_signing_key where tenant_id = ? order by kid', [tenant.id])) as {
      kid: string;
      private_jwk_enc: string;
    }[];
    for (const key of signingKeys) {
      const fresh = rewrap(key.private_jwk_enc, signingKeyAad(key.kid), 'oidc_signing_key', key.kid);
      if (fresh === null) continue;
      const updated = await em.execute('update oidc_signing_key set private_jwk_enc = ? where kid = ? and tenant_id = ? and private_jwk_enc = ? returning kid', [
        fresh, key.kid, tenant.id, key.private_jwk_enc,
      ]);
      report.oidcSigningKeys += updated.length;
    }

    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const users = (await em.execute(
        `select id, totp_secret_enc, totp_pending_secret_enc from app_user
         where tenant_id = ? and id > ? and (totp_secret_enc is not null or totp_pending_secret_enc is not null)
         order by id limit ?`,
        [tenant.id, after, USER_PAGE_SIZE],
      )) as UserSecretsRow[];
      for (const user of users) {
        const jobs: [Column, 'totp_secret' | 'pending_totp_secret'][] = [
          ['totp_secret_enc', 'totp_secret'],
          ['totp_pending_secret_enc', 'pending_totp_secret'],
        ];
        for (const [column, kind] of jobs) {
          const fresh = rewrap(user[column], totpSecretAad(user.id), kind, user.id);
          if (fresh === null) continue;
          const updated = await em.execute(
            `update app_user set ${column} = ? where id = ? and tenant_id = ? and ${column} = ? returning id`,
            [fresh, user.id, tenant.id, user[column]],
          );
          if (kind === 'totp_secret') report.totpSecrets += updated.length;
          else report.pendingTotpSecrets += updated.length;
        }
      }
      if (users.length < USER_PAGE_SIZE) break;
      after = users.at(-1)!.id;
    }
  }
  if (scope.queue !== undefined || scope.tenantId === undefined) await reencryptQueuedMails(em, keyring, report, scope.queue);
  return report;
}

/**
 * Re-encrypts the queued mails and account-mail requests (`mail.send`, `account-mail.request` jobs,
 * docs/events.md "Mail") sealed under an older key, and recomputes their recipient digest under the
 * newest key, so erasure still finds them once the
 * old key leaves the ring. A row is updated only if its ciphertext is still the one read (a worker
 * may have sent and deleted it meanwhile).
 */
async function reencryptQueuedMails(em: EntityManager, keyring: Keyring, report: ReencryptionReport, queue: string | undefined): Promise<void> {
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const jobs = (await em.execute(
      `select id, kind, payload->>'sealed' as sealed from job
        where kind in ('mail.send', 'account-mail.request') and id > ?${queue === undefined ? '' : ' and queue = ?'}
        order by id limit ?`,
      queue === undefined ? [after, MAIL_PAGE_SIZE] : [after, queue, MAIL_PAGE_SIZE],
    )) as { id: string; kind: 'mail.send' | 'account-mail.request'; sealed: string | null }[];
    for (const job of jobs) {
      if (job.sealed === null || !keyring.needsReencryption(job.sealed)) continue;
      const aad = job.kind === 'mail.send' ? queuedMailAad(job.id) : accountMailRequestAad(job.id);
      let fresh: string;
      let digest: string | null = null;
      try {
        const plaintext = keyring.decrypt(job.sealed, aad);
        // a mail names its recipient `to`, a request `email`; both carry the tenant id
        const sealed = JSON.parse(plaintext) as { to?: unknown; email?: unknown; tenantId?: unknown };
        const address = job.kind === 'mail.send' ? sealed.to : sealed.email;
        if (typeof address === 'string' && typeof sealed.tenantId === 'string') {
          digest = mailRecipientDigest(keyring, sealed.tenantId, address);
        }
        fresh = keyring.encrypt(plaintext, aad);
      } catch {
        report.failures.push({ kind: 'queued_mail', id: job.id });
        continue;
      }
      const updated = await em.execute(
        `update job set payload = payload || jsonb_build_object('sealed', ?::text), recipient_digest = coalesce(?, recipient_digest)
          where id = ? and payload->>'sealed' = ? returning id`,
        [fresh, digest, job.id, job.sealed],
      );
      report.queuedMails += updated.length;
    }
    if (jobs.length < MAIL_PAGE_SIZE) break;
    after = jobs.at(-1)!.id;
  }
}
