import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/lib/errors.js';
import { assertPasswordAllowed } from '../../src/services/account-policy/password-policy.js';
import { assertMaySignIn, refuseSuspended } from '../../src/services/account-policy/sign-in-eligibility.js';
import { assertMaySignUp } from '../../src/services/account-policy/signup-policy.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: the rules every way in applies (services/account-policy), on a workspace made by
 * TenantService.create, so they are judged against its real defaults (docs/api-rules.md "Users and
 * sign-up", "Workspace policies").
 */

const suite = useServices();

/** The `details.reason` a rule refused with, or undefined when it let the call through. */
function refusal(rule: () => void): string | undefined {
  try {
    rule();
    return undefined;
  } catch (err) {
    return (err as ApiError).details.reason;
  }
}

describe('sign-in eligibility', () => {
  it('lets an active user in, refuses a suspended one and one whose address is not verified', () => {
    expect(refusal(() => assertMaySignIn('Active'))).toBeUndefined();
    expect(refusal(() => assertMaySignIn('Suspended'))).toBe('user_suspended');
    expect(refusal(() => assertMaySignIn('Pending'))).toBe('email_not_verified');
    // a flow that verifies the address itself refuses only the suspension
    expect(refusal(() => refuseSuspended('Pending'))).toBeUndefined();
    expect(refusal(() => refuseSuspended('Suspended'))).toBe('user_suspended');
  });
});

describe('sign-up policy', () => {
  it('is open by default; Domains admits its domains only (case-insensitively); InviteOnly admits nobody', async () => {
    const { tenant } = await suite.createTenant();
    expect(refusal(() => assertMaySignUp(tenant, 'anyone@example.com'))).toBeUndefined();
    const domains = { ...tenant, signupPolicy: 'Domains' as const, signupEmailDomains: ['example.com'] };
    expect(refusal(() => assertMaySignUp(domains, 'staff@example.com'))).toBeUndefined();
    expect(refusal(() => assertMaySignUp(domains, 'staff@EXAMPLE.com'))).toBeUndefined();
    expect(refusal(() => assertMaySignUp(domains, 'outsider@example.org'))).toBe('signup_domain_not_allowed');
    // the domain is what follows the last @, not a suffix of it
    expect(refusal(() => assertMaySignUp(domains, 'x@evil-example.com'))).toBe('signup_domain_not_allowed');
    expect(refusal(() => assertMaySignUp({ ...tenant, signupPolicy: 'InviteOnly' }, 'anyone@example.com'))).toBe('signup_disabled');
  });
});

describe('password policy', () => {
  it('counts code points against the workspace minimum and refuses common passwords only when it says so', async () => {
    const { tenant } = await suite.createTenant();
    const min = tenant.passwordMinLength;
    expect(refusal(() => assertPasswordAllowed(tenant, 'x'.repeat(min - 1)))).toBe('password_too_short');
    expect(refusal(() => assertPasswordAllowed(tenant, 'Zq7!vR2#pL9@wK4$'.slice(0, Math.max(min, 16))))).toBeUndefined();
    // an emoji is one character, not two UTF-16 units
    const emoji = '🔑'.repeat(min - 1);
    expect(emoji.length).toBeGreaterThanOrEqual(min);
    expect(refusal(() => assertPasswordAllowed(tenant, emoji))).toBe('password_too_short');
    const longCommon = 'password1234';
    const lenient = { passwordMinLength: 8, passwordRejectCommon: false };
    expect(refusal(() => assertPasswordAllowed(lenient, longCommon))).toBeUndefined();
    expect(refusal(() => assertPasswordAllowed({ ...lenient, passwordRejectCommon: true }, longCommon))).toBe('password_too_common');
  });
});
