import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/** A name or identifier quoted in a message: JSON-quoted, at most 200 characters of it. */
const quoted = (value: string): string => JSON.stringify(value.slice(0, 200));

/**
 * Every error the roles-and-permissions routes give (docs/oidc.md "Roles and permissions",
 * docs/api-rules.md "Errors"): each entry declares once its code, `details.reason` and message
 * (src/lib/errors.ts `defineErrorCatalog`).
 */
export const ACCESS_CONTROL_ERRORS = defineErrorCatalog({
  /** An API resource identifier that is not an absolute `https://` URL (or `http://` on a loopback host) without fragment (`problem`: why). */
  invalidIdentifier: { code: 'BAD_REQUEST', reason: 'invalid_resource_identifier', message: ({ problem }: { problem: string }) => `The identifier ${problem}` },
  /** Another API resource of the tenant has this identifier. */
  identifierTaken: { code: 'CONFLICT', reason: 'resource_identifier_taken', message: 'Another API resource of this workspace has this identifier' },
  /** The same permission name twice in one resource. */
  duplicatePermission: {
    code: 'BAD_REQUEST', reason: 'duplicate_permission', message: ({ permission }: { permission: string }) => `Permission ${JSON.stringify(permission)} is listed twice`,
  },
  /** Another role of the tenant has this name. */
  roleNameTaken: { code: 'CONFLICT', reason: 'role_name_taken', message: 'Another role of this workspace has this name' },
  /** A role names a resource identifier the tenant has not registered. */
  unknownResource: {
    code: 'BAD_REQUEST', reason: 'unknown_resource',
    message: ({ identifier }: { identifier: string }) => `No API resource of this workspace has the identifier ${quoted(identifier)}`,
  },
  /** A role names a permission its resource does not have. */
  unknownPermission: {
    code: 'BAD_REQUEST', reason: 'unknown_permission',
    message: ({ resource, permission }: { resource: string; permission: string }) => `The API resource ${quoted(resource)} has no permission ${JSON.stringify(permission)}`,
  },
  /** An assignment names a role id the tenant does not have. */
  unknownRole: { code: 'BAD_REQUEST', reason: 'unknown_role', message: ({ roleId }: { roleId: string }) => `This workspace has no role with the id ${roleId}` },
  /** Roles are held by users and `m2m` applications only. */
  notM2m: { code: 'BAD_REQUEST', reason: 'application_not_m2m', message: 'Roles are held by users and m2m applications only' },
  /** No role of the tenant has this id. */
  roleNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Role not found' },
  /** No API resource of the tenant has this id. */
  apiResourceNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'API resource not found' },
});

/** The `details.reason` of each entry of ACCESS_CONTROL_ERRORS, by entry name (for routers' `errorReasons`). */
export const ACCESS_CONTROL_REASONS = reasonsOf(ACCESS_CONTROL_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    accessControl: typeof ACCESS_CONTROL_REASONS;
  }
}
