import { EntitySchema } from '@mikro-orm/core';

/** Every audit action (docs/audit.md). */
export const AUDIT_ACTIONS = [
  'UserSignup', 'UserLogin', 'UserLoginFailed', 'UserLogout', 'UserPasswordChanged', 'UserEmailVerified',
  'UserSoftDeleted', 'UserHardDeleted', 'UserRoleChanged', 'UserSuspended', 'UserReactivated', 'UserRestored', 'UserCreated', 'UserUnlocked',
  'UserPasswordResetSent', 'UserVerificationMailSent', 'UserEmailChangeRequested', 'UserEmailChanged', 'UserProfileUpdated',
  'MfaTotpEnrolled', 'MfaTotpDisabled', 'MfaTotpVerified', 'MfaEmailOtpSent', 'MfaEmailOtpVerified',
  'MfaEmailOtpFailed', 'MfaRecoveryCodeUsed', 'MfaRecoveryCodesGenerated',
  'InviteCreated', 'InviteAccepted', 'InviteRevoked', 'InviteExpired',
  'ApiKeyCreated', 'ApiKeyRevoked',
  'SessionCreated', 'SessionRevoked', 'SessionFamilyCompromised',
  'TenantCreated', 'TenantUpdated', 'TenantSoftDeleted',
  'GdprExportRequested', 'GdprExportCompleted', 'GdprErasureRequested', 'GdprErasureCompleted',
  'IdpOauthLinked', 'IdpOauthUnlinked',
  'PasskeyRegistered', 'PasskeyDeleted', 'PasskeyCloneSuspected',
  'ApplicationCreated', 'ApplicationUpdated', 'ApplicationDeleted', 'ApplicationSecretRotated', 'OidcSignIn',
  'ApiResourceCreated', 'ApiResourceUpdated', 'ApiResourceDeleted', 'RoleCreated', 'RoleUpdated', 'RoleDeleted',
  'UserRolesChanged', 'ApplicationRolesChanged', 'UserCustomDataChanged',
  'UsersImported',
  'OrganizationCreated', 'OrganizationUpdated', 'OrganizationDeleted', 'OrganizationRoleCreated', 'OrganizationRoleUpdated', 'OrganizationRoleDeleted',
  'OrganizationMemberAdded', 'OrganizationMemberRemoved', 'OrganizationMemberRolesChanged',
  'SsoConnectionCreated', 'SsoConnectionUpdated', 'SsoConnectionDeleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const ACTOR_TYPES = ['user', 'api_key', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** One audit log row (docs/audit.md). Never holds a secret. */
export interface AuditEvent {
  id: string;
  tenantId: string;
  action: AuditAction;
  actorType: ActorType;
  actorId: string | null;
  targetType: string | null;
  targetId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

export const AuditEventSchema = new EntitySchema<AuditEvent>({
  name: 'AuditEvent',
  tableName: 'audit_event',
  properties: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'uuid' },
    action: { type: 'string', length: 40 },
    actorType: { type: 'string', length: 16 },
    actorId: { type: 'uuid', nullable: true },
    targetType: { type: 'string', length: 32, nullable: true },
    targetId: { type: 'string', length: 64, nullable: true },
    ip: { type: 'string', length: 64, nullable: true },
    userAgent: { type: 'string', length: 512, nullable: true },
    details: { type: 'json' },
    createdAt: { type: 'Date' },
  },
});
