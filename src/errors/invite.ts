import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error the invite routes give (docs/api-rules.md "Errors"): each entry declares once its
 * code, `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`).
 */
export const INVITE_ERRORS = defineErrorCatalog({
  /** Unknown, spent or no longer acceptable invite token. */
  invalid: { code: 'UNAUTHORIZED', reason: 'invite_invalid', message: 'The invitation is not valid' },
  /** The invite is past its expiry. */
  expired: { code: 'UNAUTHORIZED', reason: 'invite_expired', message: 'The invitation has expired' },
  /** The invite was already accepted or revoked; `action` is what was refused (`sent again`, `revoked`). */
  notOpen: {
    code: 'CONFLICT', reason: 'invite_not_open',
    message: ({ status, action }: { status: string; action: string }) => `The invite is ${status.toLowerCase()} and cannot be ${action}`,
  },
  /** A signed-in person presented an invitation sent to another address. */
  emailMismatch: { code: 'FORBIDDEN', reason: 'invite_email_mismatch', message: 'The invitation was sent to another email address' },
  /**
   * The caller's `Idempotency-Key` was used with a different request within its window (IETF httpapi
   * Idempotency-Key draft; a 409 here, as the contract's conflicts are).
   */
  idempotencyKeyReused: {
    code: 'CONFLICT', reason: 'idempotency_key_reused', message: 'The Idempotency-Key was already used for a different request',
  },
  /** No invite of the tenant has this id. */
  inviteNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'Invite not found' },
  /** `organizationRoles` given without the `organizationId` they apply in (`details.issues`). */
  organizationRolesWithoutOrganization: {
    code: 'BAD_REQUEST', reason: REQUEST_REASONS.validationFailed, message: 'organizationRoles needs organizationId',
    details: () => ({ issues: [{ path: 'organizationRoles', message: 'needs organizationId' }] }),
  },
});

/** The `details.reason` of each entry of INVITE_ERRORS, by entry name (for routers' `errorReasons`). */
export const INVITE_REASONS = reasonsOf(INVITE_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    invites: typeof INVITE_REASONS;
  }
}
