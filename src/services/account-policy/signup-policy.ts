import type { Tenant } from '../../entities/tenant.js';
import { SIGN_IN_ERRORS } from '../../errors/sign-in.js';

/**
 * The workspace's sign-up policy (docs/api-rules.md "Users and sign-up"), checked by every way an
 * account is created without an invite (password sign-up, a first provider sign-in): `Open` lets
 * anyone in, `Domains` only addresses of `signupEmailDomains`, `InviteOnly` nobody. Invites work
 * under every policy.
 * @param email the normalised (lower-case) address.
 * @throws ApiError 403 `signup_disabled`, `signup_domain_not_allowed`.
 */
export function assertMaySignUp(tenant: Pick<Tenant, 'signupPolicy' | 'signupEmailDomains'>, email: string): void {
  if (tenant.signupPolicy === 'InviteOnly') throw SIGN_IN_ERRORS.signupDisabled();
  if (tenant.signupPolicy === 'Domains') {
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    if (!tenant.signupEmailDomains.includes(domain)) {
      throw SIGN_IN_ERRORS.signupDomainNotAllowed();
    }
  }
}
