import { EntitySchema } from '@mikro-orm/core';
import type { Locale } from '../lib/locales.js';

export const USER_STATUSES = ['Pending', 'Active', 'Suspended'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
export const USER_ROLES = ['Member', 'Admin'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** A person of one tenant (docs/api-rules.md "Resources"). Emails are stored lower-cased. */
export interface User {
  id: string;
  tenantId: string;
  email: string;
  /**
   * argon2id PHC string; an imported user's foreign hash as its JSON record until their next sign-in
   * (security/foreign-passwords.ts, docs/import.md); null for users without a password.
   */
  passwordHash: string | null;
  status: UserStatus;
  role: UserRole;
  createdAt: Date;
  updatedAt: Date;
  lastLoginAt: Date | null;
  emailVerifiedAt: Date | null;
  deletedAt: Date | null;
  /** AES-256-GCM ciphertext of the active RFC 6238 secret. */
  totpSecretEnc: string | null;
  totpEnrolledAt: Date | null;
  /** Ciphertext of a secret handed out by an enroll step and not yet verified. */
  totpPendingSecretEnc: string | null;
  /** Highest RFC 6238 time step accepted so far, so a code is accepted once. */
  totpLastUsedStep: string | null;
  /** The language the person last used the pages in (set at sign-up and sign-in); mails to them speak it. */
  locale: Locale | null;
  /** The tenant's own JSON object about the person (plan, flags…), at most 4 KiB; the `custom_data` claim (docs/oidc.md "Roles and permissions"). */
  customData: Record<string, unknown>;
  /** When an import created the user (docs/import.md); null for users who came in any other way. */
  importedAt: Date | null;
  /** The person's display name, 1 to 128 characters (lib/profile.ts); the OpenID `name` claim (docs/oidc.md). Null when not set. */
  name: string | null;
  /** An https URL of the person's picture, at most 2048 characters (lib/profile.ts); the OpenID `picture` claim. Null when not set. */
  picture: string | null;
}

export const UserSchema = new EntitySchema<User>({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    email: { type: 'string', length: 254 },
    passwordHash: { type: 'text', nullable: true },
    status: { type: 'string', length: 16 },
    role: { type: 'string', length: 16 },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
    lastLoginAt: { type: 'Date', nullable: true },
    emailVerifiedAt: { type: 'Date', nullable: true },
    deletedAt: { type: 'Date', nullable: true },
    totpSecretEnc: { type: 'text', nullable: true },
    totpEnrolledAt: { type: 'Date', nullable: true },
    totpPendingSecretEnc: { type: 'text', nullable: true },
    totpLastUsedStep: { type: 'bigint', nullable: true },
    locale: { type: 'string', length: 8, nullable: true },
    customData: { type: 'json' },
    importedAt: { type: 'Date', nullable: true },
    name: { type: 'string', length: 128, nullable: true },
    picture: { type: 'string', length: 2048, nullable: true },
  },
});
