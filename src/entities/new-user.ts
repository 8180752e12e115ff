import { randomUUID } from 'node:crypto';
import type { User } from './user.js';

/** The fields that differ between the ways a user comes into being. */
export type NewUserFields = Pick<User, 'tenantId' | 'email' | 'passwordHash' | 'status' | 'role'> & Partial<Pick<User, 'emailVerifiedAt' | 'locale' | 'importedAt' | 'name' | 'picture'>>;

/**
 * A user row not yet inserted: a fresh id, `createdAt`/`updatedAt` = `now`, no sign-in yet, no TOTP,
 * not deleted. `email` must already be normalised (lib/email.ts).
 */
export function newUser(fields: NewUserFields, now = new Date()): User {
  return {
    id: randomUUID(),
    ...fields,
    createdAt: now,
    updatedAt: now,
    lastLoginAt: null,
    emailVerifiedAt: fields.emailVerifiedAt ?? null,
    deletedAt: null,
    totpSecretEnc: null,
    totpEnrolledAt: null,
    totpPendingSecretEnc: null,
    totpLastUsedStep: null,
    locale: fields.locale ?? null,
    customData: {},
    importedAt: fields.importedAt ?? null,
    name: fields.name ?? null,
    picture: fields.picture ?? null,
  };
}
