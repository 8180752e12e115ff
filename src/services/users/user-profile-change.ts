import type { User } from '../../entities/user.js';
import type { ProfileChange } from '../../lib/profile.js';
import type { AuditScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import { updateProfile } from '../../queries/user.js';

/** The profile fields, in the order `details.changed` of `UserProfileUpdated` lists them. */
const PROFILE_FIELDS = ['name', 'picture'] as const;

/**
 * Writes the profile fields of `change` that differ from what `user` holds (PATCH me by the person,
 * PATCH users/{userId} by an Admin; docs/api-rules.md "Users and sign-up") and audits
 * `UserProfileUpdated` with `details.changed`, the names of the fields that changed (never their
 * values: the log outlives an erasure's scrub of addresses, docs/lifecycle.md). Nothing is written
 * or audited when nothing changes. Call inside the caller's transaction (`scope.em`), with the user
 * row locked or just read in it; `change` is already validated (lib/profile.ts). The event's actor
 * and metadata are the scope's: the person, or the Admin or API key changing them.
 * @returns the user's name and picture afterwards.
 */
export async function applyProfileChange(
  scope: AuditScope, audit: AuditService, user: User, change: ProfileChange, now: Date,
): Promise<Pick<User, 'name' | 'picture'>> {
  const after = { name: change.name === undefined ? user.name : change.name, picture: change.picture === undefined ? user.picture : change.picture };
  const changed = PROFILE_FIELDS.filter((field) => after[field] !== user[field]);
  if (changed.length === 0) return { name: user.name, picture: user.picture };
  await updateProfile(scope.em, user.tenantId, user.id, Object.fromEntries(changed.map((field) => [field, after[field]])), now);
  await audit.record(scope, { action: 'UserProfileUpdated', target: { type: 'user', id: user.id }, details: { changed } });
  return after;
}
