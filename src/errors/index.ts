/**
 * Every feature's catalog of `details.reason` values in one place: importing this module brings all
 * of them into `ErrorReason` (src/lib/errors.ts), so a program that sees one router sees every
 * reason. The root router imports it; a new feature adds its catalog here.
 */
export { REQUEST_REASONS } from '../lib/errors.js';
export { ACCESS_CONTROL_REASONS } from './access-control.js';
export { API_KEY_REASONS } from './api-key.js';
export { BRANDING_REASONS } from './branding.js';
export { IDP_REASONS } from './idp.js';
export { INVITE_REASONS } from './invite.js';
export { MFA_REASONS } from './mfa.js';
export { OIDC_REASONS } from './oidc.js';
export { ORGANIZATION_REASONS } from './organization.js';
export { PASSKEY_REASONS } from './passkey.js';
export { SESSION_REASONS } from './session.js';
export { SIGN_IN_REASONS } from './sign-in.js';
export { TENANT_REASONS } from './tenant.js';
export { USER_REASONS } from './user.js';
export { WEBHOOK_REASONS } from './webhook.js';
