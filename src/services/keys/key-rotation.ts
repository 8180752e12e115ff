import type { EntityManager } from '@mikro-orm/postgresql';
import type { Keyring } from '../../security/keyring.js';
import { idpClientSecretAssociatedData } from '../idp/idp-service.js';
import { totpSecretAad } from '../mfa/totp-service.js';
import { secretAad as webhookSecretAad } from '../webhooks/webhook-service.js';
import { mailRecipientDigest, queuedMailAad } from '../mail/mailer.js';
import { accountMailRequestAad } from '../lifecycle/account-mail-requests.js';
import { applicationSecretAad } from '../oidc/application-service.js';
import { signingKeyAad } from '../oidc/signing-keys.js';
import { findSealedJobs, replaceSealedJob } from '../../queries/job.js';
import { findApplicationSecrets, replaceClientSecretCiphertext } from '../../queries/oidc-application.js';
import { findKeyCiphertexts, replaceKeyCiphertext } from '../../queries/signing-key.js';
import { findConnectionSecrets, replaceConnectionSecretCiphertext } from '../../queries/sso-connection.js';
import { ssoClientSecretAssociatedData, ssoSpKeyAssociatedData } from '../sso/sso-connection-service.js';
import { findTenantIdpSecrets, replaceIdpSecretCiphertext } from '../../queries/tenant.js';
import { findUsersWithTotpSecrets, replaceTotpCiphertext } from '../../queries/user.js';
import { findEndpointCiphertexts, replaceEndpointCiphertext } from '../../queries/webhook-endpoint.js';


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
  /** Client secrets of the tenants' OpenID Connect SSO connections (docs/sso.md). */
  ssoClientSecrets: number;
  /** Private keys of the tenants' SAML SSO connections' service providers (docs/sso.md). */
  ssoSpKeys: number;
  /**
   * Mails and account-mail requests waiting in the job queue (or failed for good and kept), with
   * their recipient digests.
   */
  queuedMails: number;
  /** Ciphertexts that could not be decrypted (key version missing from the ring, or tampered); left as they are. */
  failures: {
    kind: 'totp_secret' | 'pending_totp_secret' | 'idp_client_secret' | 'webhook_secret' | 'queued_mail' | 'application_secret' | 'oidc_signing_key'
      | 'sso_client_secret' | 'sso_sp_key';
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

/**
 * Key rotation (`npm run keys:rotate`): rewrites every field-encrypted secret made under an older key
 * of the ring (TOTP secrets, pending TOTP secrets, tenants' IdP client secrets, webhook signing
 * secrets, applications' client secrets, OpenID-provider signing keys, SSO connections' client
 * secrets and SP keys, mails waiting in the job queue) under the newest key,
 * tenant by tenant (or only `scope.tenantId`). Each row is updated only if its ciphertext is still the one read, so a concurrent
 * enrollment is never overwritten; running it again changes nothing. Safe while the service runs.
 */
export async function reencryptSecrets(em: EntityManager, keyring: Keyring, scope: RotationScope = {}): Promise<ReencryptionReport> {
  const report: ReencryptionReport = {
    keyVersion: keyring.currentVersion, totpSecrets: 0, pendingTotpSecrets: 0, idpClientSecrets: 0, webhookSecrets: 0,
    applicationSecrets: 0, oidcSigningKeys: 0, ssoClientSecrets: 0, ssoSpKeys: 0, queuedMails: 0,
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

  const tenants = await findTenantIdpSecrets(em, scope.tenantId);
  for (const tenant of tenants) {
    const idpSecret = rewrap(tenant.idpClientSecretEnc, idpClientSecretAssociatedData(tenant.id), 'idp_client_secret', tenant.id);
    if (idpSecret !== null && (await replaceIdpSecretCiphertext(em, tenant.id, idpSecret, tenant.idpClientSecretEnc!))) report.idpClientSecrets += 1;

    const endpoints = await findEndpointCiphertexts(em, tenant.id);
    for (const endpoint of endpoints) {
      const secrets = [['current', endpoint.secretEncrypted], ['previous', endpoint.previousSecretEncrypted]] as const;
      for (const [which, ciphertext] of secrets) {
        const fresh = rewrap(ciphertext, webhookSecretAad(endpoint.id), 'webhook_secret', endpoint.id);
        if (fresh === null) continue;
        if (await replaceEndpointCiphertext(em, tenant.id, endpoint.id, which, fresh, ciphertext!)) report.webhookSecrets += 1;
      }
    }

    const applications = await findApplicationSecrets(em, tenant.id);
    for (const app of applications) {
      const fresh = rewrap(app.clientSecretEnc, applicationSecretAad(app.id), 'application_secret', app.id);
      if (fresh === null) continue;
      if (await replaceClientSecretCiphertext(em, tenant.id, app.id, fresh, app.clientSecretEnc)) report.applicationSecrets += 1;
    }
    const signingKeys = await findKeyCiphertexts(em, tenant.id);
    for (const key of signingKeys) {
      const fresh = rewrap(key.privateJwkEnc, signingKeyAad(key.kid), 'oidc_signing_key', key.kid);
      if (fresh === null) continue;
      if (await replaceKeyCiphertext(em, tenant.id, key.kid, fresh, key.privateJwkEnc)) report.oidcSigningKeys += 1;
    }

    for (const connection of await findConnectionSecrets(em, tenant.id)) {
      const secret = rewrap(connection.oidcClientSecretEnc, ssoClientSecretAssociatedData(tenant.id, connection.id), 'sso_client_secret', connection.id);
      if (secret !== null && (await replaceConnectionSecretCiphertext(em, tenant.id, connection.id, 'client_secret', secret, connection.oidcClientSecretEnc!))) {
        report.ssoClientSecrets += 1;
      }
      const key = rewrap(connection.spPrivateKeyEnc, ssoSpKeyAssociatedData(tenant.id, connection.id), 'sso_sp_key', connection.id);
      if (key !== null && (await replaceConnectionSecretCiphertext(em, tenant.id, connection.id, 'sp_key', key, connection.spPrivateKeyEnc!))) report.ssoSpKeys += 1;
    }

    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const users = await findUsersWithTotpSecrets(em, tenant.id, after, USER_PAGE_SIZE);
      for (const user of users) {
        const secrets = [
          ['active', user.totpSecretEnc, 'totp_secret'],
          ['pending', user.totpPendingSecretEnc, 'pending_totp_secret'],
        ] as const;
        for (const [which, ciphertext, kind] of secrets) {
          const fresh = rewrap(ciphertext, totpSecretAad(user.id), kind, user.id);
          if (fresh === null) continue;
          if (!(await replaceTotpCiphertext(em, tenant.id, user.id, which, fresh, ciphertext!))) continue;
          if (kind === 'totp_secret') report.totpSecrets += 1;
          else report.pendingTotpSecrets += 1;
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
    const jobs = await findSealedJobs(em, after, MAIL_PAGE_SIZE, queue);
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
      if (await replaceSealedJob(em, job.id, fresh, digest, job.sealed)) report.queuedMails += 1;
    }
    if (jobs.length < MAIL_PAGE_SIZE) break;
    after = jobs.at(-1)!.id;
  }
}
