/**
 * Every `details.reason` the roles-and-permissions routes give (docs/oidc.md "Roles and permissions", docs/api-rules.md
 * "Errors"). Declared once here; the error constructors and the routers' `errorReasons` accept only
 * catalog reasons (src/lib/errors.ts).
 */
export const ACCESS_CONTROL_REASONS = {
  /** An API resource identifier that is not an absolute `https://` URL (or `http://` on a loopback host) without fragment. */
  invalidIdentifier: 'invalid_resource_identifier',
  /** Another API resource of the tenant has this identifier. */
  identifierTaken: 'resource_identifier_taken',
  /** The same permission name twice in one resource. */
  duplicatePermission: 'duplicate_permission',
  /** Another role of the tenant has this name. */
  roleNameTaken: 'role_name_taken',
  /** A role names a resource identifier the tenant has not registered. */
  unknownResource: 'unknown_resource',
  /** A role names a permission its resource does not have. */
  unknownPermission: 'unknown_permission',
  /** An assignment names a role id the tenant does not have. */
  unknownRole: 'unknown_role',
  /** Roles are held by users and `m2m` applications only. */
  notM2m: 'application_not_m2m',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    accessControl: typeof ACCESS_CONTROL_REASONS;
  }
}
