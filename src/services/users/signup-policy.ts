import type { Tenant } from '../../entities/tenant.js';
import { forbidden } from '../../lib/errors.js';
import { SIGN_IN_REASONS } from '../sign-in/sign-in-errors.js';

/**
 * The workspace's sign-up policy (docs/api-rules.md "Users and sign-up"), checked by every way an
 * account is created without an invite (password sign-up, a first provider sign-in): `Open` lets
 * anyone in, `Domains` only addresses of `signupEmailDomains`, `InviteOnly` nobody. Invites work
 * under every policy.
 * @param email the normalised (lower-case) address.
 * @throws ApiError 403 `signup_disabled`, `signup_domain_not_allowed`.
 */
export function assertMaySignUp(tenant: Pick<Tenant, 'signupPolicy' | 'signupEmailDomains'>, email: string): void {
  if (tenant.signupPolicy === 'InviteOnly') throw forbidden(SIGN_IN_REASONS.signupDisabled, 'This workspace is invite-only: ask an admin for an invite');
  if (tenant.signupPolicy === 'Domains') {
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    if (!tenant.signupEmailDomains.includes(domain)) {
      throw forbidden(SIGN_IN_REASONS.signupDomainNotAllowed, 'Sign-up in this workspace is open to some email domains only');
    }
  }
}
