import { EntitySchema } from '@mikro-orm/core';
import type { Locale } from '../lib/locales.js';

export const TENANT_PLANS = ['Free', 'Starter', 'Growth', 'Enterprise'] as const;
export type TenantPlan = (typeof TENANT_PLANS)[number];
export const MFA_POLICIES = ['Disabled', 'Optional', 'Required'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];
/** Who may sign up (docs/api-rules.md "Users and sign-up"): anyone, addresses of listed domains, or invited people only. */
export const SIGNUP_POLICIES = ['Open', 'Domains', 'InviteOnly'] as const;
export type SignupPolicy = (typeof SIGNUP_POLICIES)[number];
/**
 * How a workspace's page header shows it (docs/web.md "Branding"): logo and name side by side, the
 * logo alone (a logo that already spells the name; the name stays its alt text and in `<title>`), or
 * the name alone. Without a logo every choice shows the name.
 */
export const BRAND_DISPLAYS = ['LogoAndName', 'LogoOnly', 'NameOnly'] as const;
export type BrandDisplay = (typeof BRAND_DISPLAYS)[number];

/**
 * The policies of a new workspace (docs/api-rules.md "Workspace policies"): the values the service
 * used before they were settings.
 */
export const DEFAULT_TENANT_POLICIES = {
  passwordMinLength: 12,
  passwordRejectCommon: true,
  lockoutMaxFailedAttempts: 10,
  lockoutWindowSeconds: 900,
  refreshTokenLifetimeSeconds: 2_592_000,
} as const;

/** A workspace (docs/api-rules.md "Resources"). Soft-deleted tenants keep their row with `deletedAt`. */
export interface Tenant {
  id: string;
  slug: string;
  name: string;
  plan: TenantPlan;
  mfaPolicy: MfaPolicy;
  /** When true, new users stay `Pending` until they verify their email. */
  requireEmailVerification: boolean;
  signupPolicy: SignupPolicy;
  /** Email domains sign-up is open to under `Domains` (lower case). */
  signupEmailDomains: string[];
  idpClientId: string | null;
  /** AES-256-GCM ciphertext of the IdP client secret (see security/keyring.ts); never plaintext. */
  idpClientSecretEnc: string | null;
  /** The tenant's own OpenID provider (its discovery-checked issuer identifier); null: the deployment's `IDP_ISSUER`. */
  idpIssuer: string | null;
  /** Lower-case email domains a provider sign-in must come from; null (or empty): any domain. */
  idpAllowedEmailDomains: string[] | null;
  /** Whether a provider's `amr` showing MFA stands in for a user's own enrolled factor (default false). */
  idpMfaTrust: boolean;
  /** The language of the workspace's pages and mails when the person's own is unknown (docs/web.md "Languages"). */
  defaultLocale: Locale;
  /** The name pages and mails show; null: `name` (docs/web.md "Branding"). */
  displayName: string | null;
  /** `#rrggbb` of buttons and accents on pages and in mails (white text on it reaches WCAG AA); null: the service's. */
  primaryColor: string | null;
  /** An https or mailto link for help, on pages and in mails; null: none. */
  supportUrl: string | null;
  /** The strong ETag of the stored logo (`tenant_logo`, variant `light`); null: no logo. */
  logoEtag: string | null;
  /** The strong ETag of the logo for the dark theme (`tenant_logo`, variant `dark`); null: the dark theme shows `logoEtag`'s. */
  darkLogoEtag: string | null;
  /** How the page header shows the workspace: logo and name, logo only, name only (default `LogoAndName`). */
  brandDisplay: BrandDisplay;
  /** The shortest password accepted when one is set (12 to 128 characters; docs/api-rules.md "Workspace policies"). */
  passwordMinLength: number;
  /** Whether a password among the bundled list of common passwords is refused (default true). */
  passwordRejectCommon: boolean;
  /** Failed sign-ins of one address (from one client) before login answers 429 (3 to 100, default 10). */
  lockoutMaxFailedAttempts: number;
  /** How long the failures count and the lockout lasts, in seconds (60 to 86400, default 900). */
  lockoutWindowSeconds: number;
  /** How long a new session's refresh token lives, in seconds (3600 to 2592000, default 30 days). */
  refreshTokenLifetimeSeconds: number;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export const TenantSchema = new EntitySchema<Tenant>({
  name: 'Tenant',
  tableName: 'tenant',
  properties: {
    id: { type: 'uuid', primary: true },
    slug: { type: 'string', length: 63, unique: true },
    name: { type: 'string', length: 120 },
    plan: { type: 'string', length: 16 },
    mfaPolicy: { type: 'string', length: 16 },
    requireEmailVerification: { type: 'boolean' },
    signupPolicy: { type: 'string', length: 16, default: 'Open' },
    signupEmailDomains: { type: 'json', default: '[]' },
    idpClientId: { type: 'string', length: 512, nullable: true },
    idpClientSecretEnc: { type: 'text', nullable: true },
    idpIssuer: { type: 'string', length: 512, nullable: true },
    idpAllowedEmailDomains: { type: 'json', nullable: true },
    idpMfaTrust: { type: 'boolean', default: false },
    defaultLocale: { type: 'string', length: 8, default: 'en' },
    displayName: { type: 'string', length: 120, nullable: true },
    primaryColor: { type: 'string', length: 7, nullable: true },
    supportUrl: { type: 'string', length: 2048, nullable: true },
    logoEtag: { type: 'string', length: 64, nullable: true },
    darkLogoEtag: { type: 'string', length: 64, nullable: true },
    brandDisplay: { type: 'string', length: 16, default: 'LogoAndName' },
    passwordMinLength: { type: 'integer', default: 12 },
    passwordRejectCommon: { type: 'boolean', default: true },
    lockoutMaxFailedAttempts: { type: 'integer', default: 10 },
    lockoutWindowSeconds: { type: 'integer', default: 900 },
    refreshTokenLifetimeSeconds: { type: 'integer', default: 2592000 },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
    deletedAt: { type: 'Date', nullable: true },
  },
});

/**
 * A slug given to a tenant, reserved for ever (docs/decisions.md "Slugs are never reused"): the slug
 * names the tenant's OpenID issuer, which resource servers trust, so an erased tenant's slug is never
 * given to another tenant.
 */
export interface TenantSlugReservation {
  slug: string;
  reservedAt: Date;
}

export const TenantSlugReservationSchema = new EntitySchema<TenantSlugReservation>({
  name: 'TenantSlugReservation',
  tableName: 'tenant_slug_reservation',
  properties: {
    slug: { type: 'string', length: 63, primary: true },
    reservedAt: { type: 'Date' },
  },
});
