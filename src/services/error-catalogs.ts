/**
 * Every feature's catalog of `details.reason` values in one place: importing this module brings all
 * of them into `ErrorReason` (src/lib/errors.ts), so a program that sees one router sees every
 * reason. The root router imports it; a new feature adds its catalog here.
 */
export { REQUEST_REASONS } from '../lib/errors.js';
export { ACCESS_CONTROL_REASONS } from './access-control/access-control-errors.js';
export { API_KEY_REASONS } from './api-keys/api-key-errors.js';
export { BRANDING_REASONS } from './branding/branding-errors.js';
export { IDP_REASONS } from './idp/idp-errors.js';
export { INVITE_REASONS } from './invites/invite-errors.js';
export { MFA_REASONS } from './mfa/mfa-errors.js';
export { OIDC_REASONS } from './oidc/oidc-errors.js';
export { ORGANIZATION_REASONS } from './organizations/organization-errors.js';
export { PASSKEY_REASONS } from './passkeys/passkey-errors.js';
export { SESSION_REASONS } from './sessions/session-errors.js';
export { SIGN_IN_REASONS } from './sign-in/sign-in-errors.js';
export { TENANT_REASONS } from './tenants/tenant-errors.js';
export { USER_REASONS } from './users/user-errors.js';
export { WEBHOOK_REASONS } from './webhooks/webhook-errors.js';
