import type { AuditScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import type { RevokeReason, SessionService } from '../sessions/session-service.js';
import { deleteLinkRequestsOfUser } from '../../queries/idp-auth-request.js';
import { deleteIdentitiesOfUser } from '../../queries/idp-identity.js';
import { deleteAllOpenAccountTokens } from '../../queries/account-token.js';
import { deleteEmailOtpOfUser } from '../../queries/email-otp.js';
import { deleteChallengesOfUser as deleteMfaChallengesOfUser } from '../../queries/mfa-challenge.js';
import { deleteRecoveryCodesOfUser } from '../../queries/recovery-code.js';
import { deleteAllPasskeysOfUser } from '../../queries/passkey.js';
import { deleteChallengesOfUser as deleteWebauthnChallengesOfUser } from '../../queries/webauthn-challenge.js';
import { clearPasswordAndTotp, lockCredentialPresence } from '../../queries/user.js';

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
   * Call inside the reclaiming operation's transaction (`scope.em`); the events' actor and metadata
   * are the scope's.
   * @returns what was removed.
   */
  async clearAll(scope: AuditScope, userId: string, reason: RevokeReason, keep?: KeptProviderIdentity): Promise<ClearedCredentials> {
    const { em: tx } = scope;
    const tenantId = scope.tenant.id;
    const user = await lockCredentialPresence(tx, tenantId, userId);
    await clearPasswordAndTotp(tx, tenantId, userId, new Date());
    await deleteEmailOtpOfUser(tx, tenantId, userId);
    await deleteAllOpenAccountTokens(tx, tenantId, userId);
    await deleteMfaChallengesOfUser(tx, tenantId, userId);
    await deleteWebauthnChallengesOfUser(tx, tenantId, userId);
    // a provider link flow the pre-registrant started would link a provider account to this user
    await deleteLinkRequestsOfUser(tx, tenantId, userId);
    const recoveryCodesRemoved = await deleteRecoveryCodesOfUser(tx, tenantId, userId);
    const passkeys = await deleteAllPasskeysOfUser(tx, tenantId, userId);
    const providerLinksRemoved = await deleteIdentitiesOfUser(tx, tenantId, userId, keep);
    const sessionsEnded = await this.sessions.revokeAllForUser(scope, userId, reason);

    const target = { type: 'user', id: userId };
    const details = { reason: 'account_reclaimed' };
    if (user?.hadTotp) await this.audit.record(scope, { action: 'MfaTotpDisabled', target, details });
    for (const passkey of passkeys) {
      await this.audit.record(scope, { action: 'PasskeyDeleted', target, details: { ...details, passkeyId: passkey.id } });
    }
    return {
      hadPassword: user?.hadPassword ?? false,
      hadTotp: user?.hadTotp ?? false,
      passkeysRemoved: passkeys.length,
      recoveryCodesRemoved,
      providerLinksRemoved,
      sessionsEnded,
    };
  }
}
