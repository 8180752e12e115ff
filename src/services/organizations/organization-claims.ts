import type { EntityManager } from '@mikro-orm/postgresql';
import { findOrganizationsOfUser, type MembershipOfUser } from '../../queries/organization-membership.js';
import { hasScope } from '../../lib/oauth-scope.js';

/** The OpenID Connect scope that asks for the person's organizations (docs/organizations.md "Tokens"). */
export const ORGANIZATIONS_SCOPE = 'organizations';
/** The claim it adds to the ID token and userinfo: `[{id, name, roles}]`. */
export const ORGANIZATIONS_CLAIM = 'organizations';

/**
 * The `organizations` claim of a person for the tenant's OpenID Provider: when the granted `scope`
 * (space-separated) holds `organizations`, `{ organizations: [{id, name, roles}] }` (by name, roles
 * sorted; an empty array for a person in none), else an empty object, without a query. Read at each
 * token or userinfo answer, so a membership change shows in the next one.
 */
export async function organizationsClaim(
  em: EntityManager, tenantId: string, userId: string, scope: string | undefined,
): Promise<{ organizations?: MembershipOfUser[] }> {
  if (!hasScope(scope, ORGANIZATIONS_SCOPE)) return {};
  return { organizations: await findOrganizationsOfUser(em, tenantId, userId) };
}
