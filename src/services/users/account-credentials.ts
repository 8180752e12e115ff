import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import type { AuditService } from '../audit/audit-service.js';
import type { RevokeReason, SessionService } from '../sessions/session-service.js';

/**
 * Every table that holds a credential, a second factor or sign-in state of one user (besides the
 * password and TOTP columns of `app_user`), with the column naming the user. `clearAll` empties
 * each of them; a test compares this list with the database's tables that reference a user, so a
 * new credential table that is not added here fails it.
 */
export const USER_CREDENTIAL_TABLES = {
  session: 'user_id',
  email_otp: 'user_id',
  account_token: 'user_id',
  mfa_challenge: 'user_id',
  mfa_recovery_code: 'user_id',
  passkey: 'user_id',
  webauthn_challenge: 'user_id',
  idp_identity: 'user_id',
  // a provider-link flow started for this user (it would link a provider account to them)
  idp_auth_request: 'link_user_id',
  oidc_hosted_login: 'user_id',
  // grants, codes and tokens the user holds at the tenant's own applications (OpenID provider)
  oidc_payload: 'account_id',
} as const;

/** What `clearAll` found and removed, for the caller's audit events and answer. */
export interface ClearedCredentials {
  hadPassword: boolean;
  /** An active or a pending TOTP factor was removed. */
  hadTotp: boolean;
  passkeysRemoved: number;
  recoveryCodesRemoved: number;
  providerLinksRemoved: number;
  sessionsEnded: number;
}

/** A provider identity to keep while every other one is removed (the one taking the account over). */
export interface KeptProviderIdentity {
  issuer: string;
  subject: string;
}

/**
 * The one operation that strips an account of every way in (docs/security.md "Pre-registered
 * accounts"): used by every path where the owner of an address reclaims an account someone else
 * registered with it before the address was proven (password reset, provider sign-in).
 */
export class AccountCredentialService {
  constructor(
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Removes the password, the TOTP factor (active and pending), recovery codes, passkeys and open
   * passkey challenges, provider link flows in progress, open email codes, unused mailed tokens (reset, verification), pending MFA
   * challenges and every provider link but `keep`, and ends every session (so their refresh tokens
   * and access tokens stop at once, `SessionRevoked` with `reason`). Audits `MfaTotpDisabled` and one
   * `PasskeyDeleted` per passkey, with `details.reason` `account_reclaimed`; the caller audits the
   * password change.
   * Call inside the reclaiming operation's transaction.
   * @returns what was removed.
   */
  async clearAll(
    tx: EntityManager,
    tenantId: string,
    userId: string,
    reason: RevokeReason,
    actor: Actor,
    meta: RequestMeta,
    keep?: KeptProviderIdentity,
  ): Promise<ClearedCredentials> {
    const users = (await tx.execute(
      `select password_hash is not null as had_password,
              (totp_secret_enc is not null or totp_pending_secret_enc is not null) as had_totp
         from app_user where id = ? and tenant_id = ? for update`,
      [userId, tenantId],
    )) as { had_password: boolean; had_totp: boolean }[];
    const user = users[0];
    await tx.execute(
      `update app_user set password_hash = null, totp_secret_enc = null, totp_enrolled_at = null,
              totp_pending_secret_enc = null, totp_last_used_step = null, updated_at = ?
        where id = ? and tenant_id = ?`,
      [new Date(), userId, tenantId],
    );
    const count = async (sql: string, params: unknown[]): Promise<number> => ((await tx.execute(sql, params)) as unknown[]).length;
    const scope = [userId, tenantId];
    await tx.execute('delete from email_otp where user_id = ? and tenant_id = ?', scope);
    await tx.execute('delete from account_token where user_id = ? and tenant_id = ? and consumed_at is null', scope);
    await tx.execute('delete from mfa_challenge where user_id = ? and tenant_id = ?', scope);
    await tx.execute('delete from webauthn_challenge where user_id = ? and tenant_id = ?', scope);
    await tx.execute('delete from oidc_hosted_login where user_id = ? and tenant_id = ?', scope);
    await tx.execute('delete from oidc_payload where account_id = ? and tenant_id = ?', scope);
    // a provider link flow the pre-registrant started would link a provider account to this user
    await tx.execute('delete from idp_auth_request where link_user_id = ? and tenant_id = ?', scope);
    const recoveryCodesRemoved = await count('delete from mfa_recovery_code where user_id = ? and tenant_id = ? returning 1', scope);
    const passkeys = (await tx.execute('delete from passkey where user_id = ? and tenant_id = ? returning id, name', scope)) as { id: string; name: string }[];
    const providerLinksRemoved = keep
      ? await count('delete from idp_identity where user_id = ? and tenant_id = ? and not (issuer = ? and subject = ?) returning 1', [...scope, keep.issuer, keep.subject])
      : await count('delete from idp_identity where user_id = ? and tenant_id = ? returning 1', scope);
    const sessionsEnded = await this.sessions.revokeAllForUser(tx, tenantId, userId, reason, actor, meta);

    const target = { type: 'user', id: userId };
    const details = { reason: 'account_reclaimed' };
    if (user?.had_totp) await this.audit.record(tx, { tenantId, action: 'MfaTotpDisabled', actor, target, meta, details });
    for (const passkey of passkeys) {
      await this.audit.record(tx, { tenantId, action: 'PasskeyDeleted', actor, target, meta, details: { ...details, passkeyId: passkey.id } });
    }
    return {
      hadPassword: user?.had_password ?? false,
      hadTotp: user?.had_totp ?? false,
      passkeysRemoved: passkeys.length,
      recoveryCodesRemoved,
      providerLinksRemoved,
      sessionsEnded,
    };
  }
}
