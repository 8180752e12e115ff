import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error the organization routes give (docs/organizations.md, docs/api-rules.md "Errors"): each
 * entry declares once its code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`).
 */
export const ORGANIZATION_ERRORS = defineErrorCatalog({
  /** Role names given for a membership or an invite that are not in the tenant's organization-role template. */
  unknownRole: {
    code: 'BAD_REQUEST', reason: 'unknown_organization_role',
    message: ({ names }: { names: readonly string[] }) => `Unknown organization role: ${names.map((name) => JSON.stringify(name)).join(', ')}`,
  },
  /** Another organization role of the tenant has this name. */
  roleNameTaken: { code: 'CONFLICT', reason: 'organization_role_name_taken', message: 'Another organization role has this name' },
  /** The user is a member of the organization already. */
  alreadyMember: { code: 'CONFLICT', reason: 'already_member', message: 'The user is a member of this organization already' },
  /** No organization of the tenant has this id. */
  organizationNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Organization not found' },
  /** The user is not a member of the organization. */
  memberNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Member not found' },
  /** No organization role of the tenant has this id. */
  roleNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Organization role not found' },
});

/** The `details.reason` of each entry of ORGANIZATION_ERRORS, by entry name (for routers' `errorReasons`). */
export const ORGANIZATION_REASONS = reasonsOf(ORGANIZATION_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    organizations: typeof ORGANIZATION_REASONS;
  }
}
