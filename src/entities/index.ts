import { AccessRolePermissionSchema, AccessRoleSchema, ApiPermissionSchema, ApiResourceSchema, ApplicationAccessRoleSchema, UserAccessRoleSchema } from './access-control.js';
import { AccountTokenSchema } from './account-token.js';
import { ApiKeySchema } from './api-key.js';
import { AuditDailyCountSchema } from './audit-daily-count.js';
import { TenantLogoSchema } from './tenant-logo.js';
import { AuditEventSchema } from './audit-event.js';
import { IdpAuthRequestSchema, IdpIdentitySchema } from './idp.js';
import { EmailOtpSchema } from './email-otp.js';
import { InviteSchema } from './invite.js';
import { InviteAnswerSchema } from './invite-answer.js';
import { JobSchema } from './job.js';
import { MfaChallengeSchema, MfaRecoveryCodeSchema } from './mfa.js';
import { OidcApplicationSchema, OidcHostedLoginSchema, OidcPayloadSchema, OidcSigningKeySchema } from './oidc.js';
import { OrganizationMembershipRoleSchema, OrganizationMembershipSchema, OrganizationRoleSchema, OrganizationSchema } from './organization.js';
import { RefreshAnswerSchema } from './refresh-answer.js';
import { WebauthnChallengeSchema } from './webauthn-challenge.js';
import { WebhookDeliverySchema, WebhookEndpointSchema } from './webhook.js';
import { PasskeySchema } from './passkey.js';
import { RefreshTokenSchema } from './refresh-token.js';
import { SessionSchema } from './session.js';
import { SsoAssertionSchema, SsoAuthRequestSchema, SsoConnectionDomainSchema, SsoConnectionSchema } from './sso.js';
import { TenantSchema, TenantSlugReservationSchema } from './tenant.js';
import { UserSchema } from './user.js';
import { UserImportErrorSchema, UserImportJobSchema, UserImportLineSchema } from './user-import.js';

export * from './access-control.js';
export * from './account-token.js';
export * from './api-key.js';
export * from './audit-daily-count.js';
export * from './audit-event.js';
export * from './idp.js';
export * from './email-otp.js';
export * from './invite.js';
export * from './job.js';
export * from './mfa.js';
export * from './oidc.js';
export * from './organization.js';
export * from './refresh-answer.js';
export * from './webauthn-challenge.js';
export * from './webhook.js';
export * from './passkey.js';
export * from './refresh-token.js';
export * from './session.js';
export * from './sso.js';
export * from './tenant.js';
export * from './user.js';
export * from './user-import.js';

/** Every entity schema the ORM knows, one per table; a new entity is added here. */
export const ENTITIES = [
  TenantSchema, UserSchema, ApiResourceSchema, ApiPermissionSchema, AccessRoleSchema, AccessRolePermissionSchema, UserAccessRoleSchema,
  ApplicationAccessRoleSchema, SessionSchema, RefreshTokenSchema, ApiKeySchema, AuditEventSchema,
  IdpAuthRequestSchema, IdpIdentitySchema, EmailOtpSchema, InviteSchema, InviteAnswerSchema, AccountTokenSchema,
  PasskeySchema, JobSchema, MfaChallengeSchema, MfaRecoveryCodeSchema, OidcApplicationSchema, OidcSigningKeySchema, OidcPayloadSchema,
  OidcHostedLoginSchema, RefreshAnswerSchema, WebauthnChallengeSchema, WebhookEndpointSchema, WebhookDeliverySchema, AuditDailyCountSchema, TenantLogoSchema,
  TenantSlugReservationSchema,
  UserImportJobSchema, UserImportLineSchema, UserImportErrorSchema,
  OrganizationSchema, OrganizationRoleSchema, OrganizationMembershipSchema, OrganizationMembershipRoleSchema,
  SsoConnectionSchema, SsoConnectionDomainSchema, SsoAuthRequestSchema, SsoAssertionSchema,
];
