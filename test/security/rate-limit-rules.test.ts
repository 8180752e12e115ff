import { describe, expect, it } from 'vitest';
import type { ProcedureMeta } from '../../src/lib/procedure-meta.js';
import { appRouter } from '../../src/routers/index.js';

/** Every procedure's declared budgets (meta `rateLimit`), by procedure path, as budget names. */
function declaredLimits(): Record<string, { ip?: string; account?: string }> {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>;
  const limits: Record<string, { ip?: string; account?: string }> = {};
  for (const [path, procedure] of Object.entries(procedures)) {
    const rule = procedure._def.meta?.rateLimit;
    if (rule) limits[path] = { ...(rule.ip ? { ip: rule.ip.name } : {}), ...(rule.account ? { account: rule.account } : {}) };
  }
  return limits;
}

/**
 * Rate limits are declared in each procedure's meta (docs/api-rules.md "Rate limits"), so a renamed
 * procedure keeps its limit; this list is the contract, so a dropped or changed limit fails here.
 */
describe('the procedures\' rate limits', () => {
  it('are declared exactly as docs/api-rules.md lists them', () => {
    expect(declaredLimits()).toEqual({
      'auth.completePasswordReset': { ip: 'ip_sign_in' },
      'auth.confirmEmailChange': { ip: 'ip_sign_in' },
      'auth.login': { ip: 'ip_sign_in', account: 'reset' },
      'auth.mfaComplete': { ip: 'ip_sign_in' },
      'auth.passkeyOptions': { ip: 'ip_sign_in' },
      'auth.passkeyVerify': { ip: 'ip_sign_in' },
      'auth.refresh': { ip: 'ip_refresh' },
      'auth.requestEmailOtp': { ip: 'ip_sign_in', account: 'count' },
      'auth.requestEmailVerification': { ip: 'ip_sign_in', account: 'count' },
      'auth.requestPasswordReset': { ip: 'ip_sign_in', account: 'count' },
      'auth.signup': { ip: 'ip_account_creation' },
      'auth.totpInitialEnroll': { ip: 'ip_sign_in', account: 'reset' },
      'auth.totpInitialVerify': { ip: 'ip_sign_in', account: 'reset' },
      'auth.verifyEmail': { ip: 'ip_sign_in' },
      'auth.verifyEmailLink': { ip: 'ip_sign_in' },
      'browser.idpCallback': { ip: 'ip_sign_in' },
      'browser.idpStart': { ip: 'ip_sign_in' },
      'browser.refresh': { ip: 'ip_refresh' },
      'browser.ssoComplete': { ip: 'ip_sign_in' },
      'idp.callback': { ip: 'ip_sign_in' },
      'idp.signInOptions': { ip: 'ip_sign_in' },
      'idp.start': { ip: 'ip_sign_in' },
      'invites.accept': { ip: 'ip_account_creation' },
      'oidcInteraction.complete': { ip: 'ip_oidc_provider' },
      'oidcInteraction.details': { ip: 'ip_oidc_provider' },
      'me.requestEmailChange': { ip: 'ip_self_service_mail' },
      'sso.start': { ip: 'ip_sign_in' },
      'sso.test': { ip: 'ip_sign_in' },
      'sso.testResult': { ip: 'ip_sign_in' },
      'tenants.create': { ip: 'ip_account_creation' },
      'users.create': { ip: 'ip_admin_user_mail' },
      'users.sendPasswordReset': { ip: 'ip_admin_user_mail' },
      'users.sendVerificationMail': { ip: 'ip_admin_user_mail' },
    });
  });

  it('limit every public procedure that checks a credential, sends mail or creates an account per IP', () => {
    const limits = declaredLimits();
    for (const path of ['auth.login', 'auth.signup', 'tenants.create', 'invites.accept', 'auth.refresh', 'auth.requestPasswordReset', 'auth.passkeyVerify']) {
      expect(limits[path]?.ip, path).toBeDefined();
    }
  });
});
