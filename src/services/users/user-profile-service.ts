import type { EntityManager } from '@mikro-orm/postgresql';
import { findIdentitiesOfUser } from '../../queries/idp-identity.js';
import type { User } from '../../entities/user.js';
import type { RecoveryCodeService } from '../mfa/recovery-code-service.js';
import { passkeysOf, type PasskeyView } from '../passkeys/passkey-service.js';
import { findLiveUserById } from '../../queries/user.js';
import { USER_ERRORS } from '../../errors/user.js';

/** A link of the user to the workspace's external provider (the provider's `sub` is its id there). */
export interface ProviderLinkView {
  issuer: string;
  subject: string;
  email: string | null;
  createdAt: Date;
  lastLoginAt: Date | null;
}

/** Everything the console's user page shows about one user, secrets excepted (docs/web.md "Console"). */
export interface UserProfile {
  user: User;
  passkeys: PasskeyView[];
  /** Unused recovery codes; 0 when none were issued. */
  recoveryCodesRemaining: number;
  providerLinks: ProviderLinkView[];
}

/** Reads one live user of a tenant with their factors and provider links (GET users/{userId}). */
export class UserProfileService {
  constructor(private readonly recoveryCodes: RecoveryCodeService) {}

  /**
   * @throws ApiError 404 `not_found` for an unknown id, a soft-deleted user or a user of another tenant.
   */
  async profile(em: EntityManager, tenantId: string, userId: string): Promise<UserProfile> {
    const user = await findLiveUserById(em, tenantId, userId);
    if (!user) throw USER_ERRORS.userNotFound();
    const passkeys = await passkeysOf(em, tenantId, userId);
    const recoveryCodesRemaining = await this.recoveryCodes.remaining(em, tenantId, userId);
    const links = await findIdentitiesOfUser(em, tenantId, userId);
    return {
      user,
      passkeys,
      recoveryCodesRemaining,
      providerLinks: links.map((l) => ({ issuer: l.issuer, subject: l.subject, email: l.email, createdAt: l.createdAt, lastLoginAt: l.lastLoginAt })),
    };
  }
}
