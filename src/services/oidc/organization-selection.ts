import type { EntityManager } from '@mikro-orm/postgresql';
import { ORGANIZATIONS_SCOPE } from '../organizations/organization-claims.js';
import { findOrganizationsOfUser, isMember } from '../../queries/organization-membership.js';
import { OIDC_ERRORS } from '../../errors/oidc.js';
import * as payloads from '../../queries/oidc-payload.js';
import { hasScope } from '../../lib/oauth-scope.js';

/**
 * The organization a person picked when an application asked for scope `organizations` (docs/oidc.md
 * "Organization picker"): kept beside the provider's grant (one per person and application) as a
 * payload of its own in the provider's storage, so it expires with the grant, goes with the grant's
 * revocation (its `grantId`) and with the account (its `accountId`). The ID token and userinfo carry it
 * as claim `organization_id` while the person is still a member.
 */

/** The claim naming the picked organization (the same name as in an organization token). */
export const SELECTED_ORGANIZATION_CLAIM = 'organization_id';
/** The authorization request parameter an application may send to name the organization itself (skips the picker). */
export const ORGANIZATION_REQUEST_PARAMETER = 'organization_id';
/** The provider-storage model of a grant's picked organization (id: the grant's id). */
const SELECTION_MODEL = payloads.GRANT_ORGANIZATION_MODEL;

/** Whether a space-separated scope holds `organizations`. */
export function asksForOrganizations(scope: unknown): boolean {
  return hasScope(scope, ORGANIZATIONS_SCOPE);
}

/**
 * Decides the organization a sign-in continues with, when the application asked for `organizations`
 * (docs/oidc.md "Organization picker"):
 * - the one the application named (`organization_id` of the authorization request) or the person
 *   picked on the hosted page (`picked`), which must be the same when both are given;
 * - else the person's only organization;
 * - else none for a person in no organization.
 * @param scope the authorization request's scope; without `organizations` nothing is chosen and a pick is refused.
 * @returns the organization id, or undefined.
 * @throws ApiError 400 `organizations_not_requested` (a pick the application did not ask for),
 *   400 `organization_mismatch` (a pick other than the one the application named), 403
 *   `organization_membership_required` (not a member of it), 409 `organization_selection_required`
 *   (a member of several, none picked).
 */
export async function chooseOrganization(
  em: EntityManager, tenantId: string, userId: string, scope: unknown, requested: string | undefined, picked: string | undefined,
): Promise<string | undefined> {
  if (!asksForOrganizations(scope)) {
    if (picked !== undefined) throw OIDC_ERRORS.organizationsNotRequested();
    return undefined;
  }
  if (requested !== undefined && picked !== undefined && requested !== picked) throw OIDC_ERRORS.organizationMismatch();
  const named = picked ?? requested;
  if (named !== undefined) {
    if (!(await isMember(em, tenantId, named, userId))) throw OIDC_ERRORS.organizationMembershipRequired();
    return named;
  }
  const organizations = await findOrganizationsOfUser(em, tenantId, userId);
  if (organizations.length > 1) throw OIDC_ERRORS.organizationSelectionRequired();
  return organizations[0]?.id;
}

/**
 * Keeps `organizationId` as the picked organization of the provider grant `grant` (replacing an
 * earlier pick), expiring with the grant (`exp`, seconds since the epoch; `fallbackSeconds` when unset).
 */
export async function rememberSelectedOrganization(
  em: EntityManager, tenantId: string, grant: { jti: string; accountId?: string; clientId?: string; exp?: number }, organizationId: string, fallbackSeconds: number,
): Promise<void> {
  const remaining = grant.exp ? grant.exp - Math.floor(Date.now() / 1000) : fallbackSeconds;
  await payloads.upsertPayload(
    em, tenantId, SELECTION_MODEL, grant.jti,
    { grantId: grant.jti, accountId: grant.accountId, clientId: grant.clientId, organizationId },
    Math.max(1, remaining),
  );
}

/**
 * The `organization_id` claim of an ID token or userinfo answer: when `scope` holds `organizations`
 * and the grant `grantId` has a picked organization the user is still a member of, `{organization_id}`;
 * else an empty object (without a query when the scope does not ask for it).
 */
export async function selectedOrganizationClaim(
  em: EntityManager, tenantId: string, grantId: string | undefined, userId: string, scope: string | undefined,
): Promise<{ organization_id?: string }> {
  if (!grantId || !asksForOrganizations(scope)) return {};
  const selection = await payloads.findPayload(em, tenantId, SELECTION_MODEL, grantId);
  const organizationId = typeof selection?.organizationId === 'string' ? selection.organizationId : undefined;
  if (!organizationId || selection?.accountId !== userId) return {};
  return (await isMember(em, tenantId, organizationId, userId)) ? { [SELECTED_ORGANIZATION_CLAIM]: organizationId } : {};
}
