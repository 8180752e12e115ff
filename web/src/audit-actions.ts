import type { AuditAction } from '../../src/entities/audit-event.js';

export type { AuditAction };

/** The areas the console groups audit actions in (the webhook event picker, the audit page's action filter), in display order. */
export const AUDIT_ACTION_GROUPS = ['users', 'sessions', 'mfa', 'invites', 'organizations', 'sso', 'applications', 'access', 'workspace'] as const;
export type AuditActionGroup = (typeof AUDIT_ACTION_GROUPS)[number];

/**
 * The area of every audit action (docs/audit.md). The Record type makes the typecheck fail for an
 * action added to `AUDIT_ACTIONS` (src/entities/audit-event.ts) without a group here.
 */
const GROUP_OF: Record<AuditAction, AuditActionGroup> = {
  UserSignup: 'users', UserCreated: 'users', UserEmailVerified: 'users', UserPasswordChanged: 'users', UserPasswordResetSent: 'users',
  UserVerificationMailSent: 'users', UserEmailChangeRequested: 'users', UserEmailChanged: 'users', UserProfileUpdated: 'users', UserRoleChanged: 'users',
  UserSuspended: 'users', UserReactivated: 'users', UserUnlocked: 'users', UserSoftDeleted: 'users', UserRestored: 'users',
  UserHardDeleted: 'users', UserCustomDataChanged: 'users', UsersImported: 'users',
  UserLogin: 'sessions', UserLoginFailed: 'sessions', UserLogout: 'sessions', SessionCreated: 'sessions', SessionRevoked: 'sessions',
  SessionFamilyCompromised: 'sessions',
  MfaTotpEnrolled: 'mfa', MfaTotpDisabled: 'mfa', MfaTotpVerified: 'mfa', MfaEmailOtpSent: 'mfa', MfaEmailOtpVerified: 'mfa',
  MfaEmailOtpFailed: 'mfa', MfaRecoveryCodeUsed: 'mfa', MfaRecoveryCodesGenerated: 'mfa',
  PasskeyRegistered: 'mfa', PasskeyDeleted: 'mfa', PasskeyCloneSuspected: 'mfa',
  InviteCreated: 'invites', InviteAccepted: 'invites', InviteRevoked: 'invites', InviteExpired: 'invites',
  OrganizationCreated: 'organizations', OrganizationUpdated: 'organizations', OrganizationDeleted: 'organizations',
  OrganizationRoleCreated: 'organizations', OrganizationRoleUpdated: 'organizations', OrganizationRoleDeleted: 'organizations',
  OrganizationMemberAdded: 'organizations', OrganizationMemberRemoved: 'organizations', OrganizationMemberRolesChanged: 'organizations',
  SsoConnectionCreated: 'sso', SsoConnectionUpdated: 'sso', SsoConnectionDeleted: 'sso', IdpOauthLinked: 'sso', IdpOauthUnlinked: 'sso',
  ApplicationCreated: 'applications', ApplicationUpdated: 'applications', ApplicationDeleted: 'applications',
  ApplicationSecretRotated: 'applications', OidcSignIn: 'applications',
  ApiResourceCreated: 'access', ApiResourceUpdated: 'access', ApiResourceDeleted: 'access', RoleCreated: 'access', RoleUpdated: 'access',
  RoleDeleted: 'access', UserRolesChanged: 'access', ApplicationRolesChanged: 'access',
  TenantCreated: 'workspace', TenantUpdated: 'workspace', TenantSoftDeleted: 'workspace', ApiKeyCreated: 'workspace', ApiKeyRevoked: 'workspace',
  GdprExportRequested: 'workspace', GdprExportCompleted: 'workspace', GdprErasureRequested: 'workspace', GdprErasureCompleted: 'workspace',
};

/** Every audit action, grouped by area in {@link AUDIT_ACTION_GROUPS} order; within a group in the order of `GROUP_OF`. */
export const AUDIT_ACTIONS_BY_GROUP: ReadonlyArray<{ group: AuditActionGroup; actions: readonly AuditAction[] }> = AUDIT_ACTION_GROUPS.map((group) => ({
  group,
  actions: (Object.keys(GROUP_OF) as AuditAction[]).filter((action) => GROUP_OF[action] === group),
}));

/** True when `value` is an audit action the console knows (a webhook delivery's `eventType` may also be `WebhookTest`). */
export function isAuditAction(value: string): value is AuditAction {
  return Object.hasOwn(GROUP_OF, value);
}
