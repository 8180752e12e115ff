/**
 * Every `details.reason` the organization routes give (docs/organizations.md, docs/api-rules.md "Errors").
 * Declared once here; the error constructors and the routers' `errorReasons` accept only catalog
 * reasons (src/lib/errors.ts).
 */
export const ORGANIZATION_REASONS = {
  /** A role name given for a membership or an invite is not in the tenant's organization-role template. */
  unknownRole: 'unknown_organization_role',
  /** Another organization role of the tenant has this name. */
  roleNameTaken: 'organization_role_name_taken',
  /** The user is a member of the organization already. */
  alreadyMember: 'already_member',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    organizations: typeof ORGANIZATION_REASONS;
  }
}
