import type { Tenant } from '../../entities/tenant.js';
import { isCommonPassword } from '../../security/common-passwords.js';
import { USER_ERRORS } from '../../errors/user.js';

/**
 * The workspace's password policy (docs/api-rules.md "Workspace policies"), checked wherever a
 * password is set: sign-up, workspace creation, password change, reset, invite acceptance and an
 * admin creating a user. Length counts Unicode code points, so an emoji is one character.
 * @throws ApiError 400 `password_too_short` (with `details.minLength`) or `password_too_common`.
 */
export function assertPasswordAllowed(tenant: Pick<Tenant, 'passwordMinLength' | 'passwordRejectCommon'>, password: string): void {
  const minLength = tenant.passwordMinLength;
  if ([...password].length < minLength) {
    throw USER_ERRORS.passwordTooShort({ minLength });
  }
  if (tenant.passwordRejectCommon && isCommonPassword(password)) {
    throw USER_ERRORS.passwordTooCommon();
  }
}
