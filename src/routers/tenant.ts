import { adminProcedure, securityAdminProcedure } from '../middleware/pipeline.js';
import { z } from 'zod';
import type { IdpFullSettingsView } from '../services/idp/idp-service.js';
import { BRAND_DISPLAYS, MFA_POLICIES, SIGNUP_POLICIES, type Tenant, TENANT_PLANS } from '../entities/tenant.js';
import { LOCALES } from '../lib/locales.js';
import { brandingOf } from '../services/branding/branding.js';
import { LOGO_MAX_BODY_BYTES, MAX_LOGO_BYTES } from '../services/branding/logo-service.js';
import type { LogoVariant } from '../entities/tenant-logo.js';
import type { RequestScope } from '../lib/request-scope.js';
import type { RequestContext } from '../context.js';
import { router } from '../trpc.js';
import { displayName, emailDomain, OK, okOutput, timestampOutput } from './schemas.js';
import { dataProtectionTags } from './user-export.js';
import { SESSION_ERRORS } from '../errors/session.js';

const tags = ['tenant'];

/** A help link: https:// or mailto:, at most 2048 characters. */
const supportLink = z.string().max(2048).regex(/^(https:\/\/[^\s]+|mailto:[^\s@]+@[^\s@]+)$/i, 'Invalid URL: use https:// or mailto:');

/**
 * A JSON-body boolean that stays strict: the REST façade coerces body fields typed `z.boolean()`
 * with `Boolean(value)` (so `"false"` would become true); a union of literals is left alone.
 */
const strictBoolean = z.union([z.literal(true), z.literal(false)]);
/** `passwordPolicy` (docs/api-rules.md "Workspace policies"). */
const passwordPolicyOutput = z
  .object({
    minLength: z.number().int().meta({ description: 'The shortest password accepted when one is set, 12 to 128 characters (default 12)' }),
    rejectCommon: z.boolean().meta({ description: 'Refuse passwords on the bundled list of common passwords (default true)' }),
  })
  .meta({ id: 'PasswordPolicy' });
/** `lockout`. */
const lockoutOutput = z
  .object({
    maxFailedAttempts: z.number().int().meta({ description: 'Failed sign-ins of one address (from one client) before login answers 429, 3 to 100 (default 10)' }),
    windowSeconds: z.number().int().meta({ description: 'How long failures count and the lockout lasts, 60 to 86400 seconds (default 900)' }),
  })
  .meta({ id: 'LockoutPolicy' });
/** `sessionPolicy`. */
const sessionPolicyOutput = z
  .object({
    refreshTokenLifetimeSeconds: z.number().int().meta({ description: 'How long a new session\'s refresh token lives, 3600 to 2592000 seconds (default 30 days)' }),
  })
  .meta({ id: 'SessionPolicy' });

const adminErrors = { 401: 'No or invalid credential', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' };

/** The tenant as the API shows it (docs/api-rules.md "Resources"), plus `requireEmailVerification`. The IdP client secret is never returned. */
export const tenantOutput = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    plan: z.enum(TENANT_PLANS),
    mfaPolicy: z.enum(MFA_POLICIES),
    idpOauthEnabled: z.boolean().meta({ description: 'True when both the IdP client id and secret are configured' }),
    idpClientId: z.string().meta({ description: 'Empty when unset' }),
    hasIdpClientSecret: z.boolean(),
    idpIssuer: z.string().meta({ description: 'The OpenID issuer provider sign-ins use: the tenant\'s own, or the deployment\'s IDP_ISSUER' }),
    idpIssuerIsDefault: z.boolean().meta({ description: 'True when the tenant set no issuer of its own (IDP_ISSUER applies)' }),
    idpAllowedEmailDomains: z.array(z.string()).meta({ description: 'Email domains provider sign-ins must come from; empty: any' }),
    idpRedirectUri: z.string().meta({ description: 'The redirect URI to register at the provider (oauth/idp/callback)' }),
    requireEmailVerification: z.boolean(),
    signupPolicy: z.enum(SIGNUP_POLICIES).meta({ description: 'Who may sign up without an invite: anyone, addresses of `signupEmailDomains`, or nobody' }),
    signupEmailDomains: z.array(z.string()).meta({ description: 'The email domains sign-up is open to under `Domains`' }),
    idpMfaTrust: z.boolean().meta({ description: 'True when a provider sign-in whose `amr` shows MFA waives the user\'s own enrolled factor (docs/idp.md "MFA")' }),
    defaultLocale: z.enum(LOCALES).meta({ description: 'The language of the pages and mails when the person\'s own is unknown (docs/web.md "Languages")' }),
    displayName: z.string().nullable().meta({ description: 'The name pages and mails show; null: `name`' }),
    primaryColor: z.string().nullable().meta({ description: '`#rrggbb` of buttons on pages and in mails; null: the service\'s colours' }),
    supportUrl: z.string().nullable().meta({ description: 'The help link on pages and in members\' mails' }),
    logoUrl: z.string().nullable().meta({ description: 'Where the logo is served (`GET /v1/{tenantSlug}/branding/logo?v=…`); null: none' }),
    darkLogoUrl: z.string().nullable()
      .meta({ description: 'Where the dark theme\'s logo is served (`GET /v1/{tenantSlug}/branding/logo/dark?v=…`); null: none, the dark theme shows `logoUrl`' }),
    brandDisplay: z.enum(BRAND_DISPLAYS)
      .meta({ description: 'How the page header shows the workspace: logo and name, the logo alone (its alt text the name), the name alone' }),
    passwordPolicy: passwordPolicyOutput,
    lockout: lockoutOutput,
    sessionPolicy: sessionPolicyOutput,
    createdAt: timestampOutput,
  })
  .meta({ id: 'Tenant' });

/**
 * Shapes a tenant row as the `Tenant` schema of the OpenAPI document.
 * @param idp the tenant's provider settings (IdpService.settingsView), never the secret.
 */
export function toTenantOutput(tenant: Tenant, idp: IdpFullSettingsView): z.infer<typeof tenantOutput> {
  const branding = brandingOf(tenant, '');
  return {
    id: tenant.id,
    slug: tenant.slug,
    name: tenant.name,
    plan: tenant.plan,
    mfaPolicy: tenant.mfaPolicy,
    ...idp,
    requireEmailVerification: tenant.requireEmailVerification,
    signupPolicy: tenant.signupPolicy,
    signupEmailDomains: tenant.signupEmailDomains,
    idpMfaTrust: tenant.idpMfaTrust,
    defaultLocale: tenant.defaultLocale,
    displayName: tenant.displayName,
    primaryColor: tenant.primaryColor,
    supportUrl: tenant.supportUrl,
    logoUrl: branding.logoUrl,
    darkLogoUrl: branding.darkLogoUrl,
    brandDisplay: tenant.brandDisplay,
    passwordPolicy: { minLength: tenant.passwordMinLength, rejectCommon: tenant.passwordRejectCommon },
    lockout: { maxFailedAttempts: tenant.lockoutMaxFailedAttempts, windowSeconds: tenant.lockoutWindowSeconds },
    sessionPolicy: { refreshTokenLifetimeSeconds: tenant.refreshTokenLifetimeSeconds },
    createdAt: tenant.createdAt.toISOString(),
  };
}

/** The body of PUT tenant/logo and PUT tenant/logo/dark: the image's bytes or a URL to fetch them from. */
const logoInput = z
  .object({
    dataBase64: z.base64().optional().meta({ description: `The image, base64-encoded (at most ${MAX_LOGO_BYTES} bytes decoded)` }),
    url: z.url().max(2048).optional().meta({ description: 'An https URL of the image, fetched once' }),
  })
  .refine((input) => (input.dataBase64 === undefined) !== (input.url === undefined), { message: 'Give exactly one of dataBase64 or url' });

/**
 * Stores the logo of `variant` from a PUT tenant/logo[/dark] body: fetched from its `url`, or decoded
 * from `dataBase64` (logoInput lets exactly one through).
 */
function setLogoFrom(ctx: Pick<RequestContext, 'services'> & { scope: RequestScope }, variant: LogoVariant, input: z.infer<typeof logoInput>): Promise<Tenant> {
  const scope = ctx.scope;
  return input.url !== undefined
    ? ctx.services.logos.fetchFrom(scope, variant, input.url)
    : ctx.services.logos.upload(scope, variant, Buffer.from(input.dataBase64 ?? '', 'base64'));
}

/** The error statuses of the logo uploads: their own body limit (src/rest/app.ts) is larger than the common one. */
const logoErrors = {
  ...adminErrors,
  400: 'Not an allowed image, too large, or the URL could not be fetched',
  413: `The body is larger than ${LOGO_MAX_BODY_BYTES} bytes (the limit of the logo routes: a ${MAX_LOGO_BYTES / 1024} KiB image in base64)`,
};
const logoReasons = { 400: ['logo_type_not_allowed', 'logo_too_large', 'logo_unreachable'] } as const;

/** Every `/v1/{tenantSlug}/tenant` procedure: the tenant's settings and its deletion. */
export const tenantRouter = router({
  get: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/v1/{tenantSlug}/tenant', protect: true, tags, summary: 'The tenant and its settings', errorResponses: adminErrors },
    })
    .output(tenantOutput)
    .query(({ ctx }) => toTenantOutput(ctx.tenant, ctx.services.idp.settingsView(ctx.tenant))),

  update: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PATCH', path: '/v1/{tenantSlug}/tenant', protect: true, tags,
        summary:
          'Change the name, MFA policy, email-verification requirement, provider-MFA trust, sign-up policy, default language, branding ' +
          'or the password, lockout and session policies (the slug never changes)',
        description:
          'Each policy object may be given in part; the fields left out keep their value. Audited as `TenantUpdated` with ' +
          '`details.changes` naming each changed field (`passwordPolicy.minLength`, …) with its old and new value.',
        errorResponses: { ...adminErrors, 400: 'Invalid body' },
      },
      errorReasons: { 400: ['color_contrast_too_low'] },
    })
    .input(
      z.object({
        name: displayName(120).optional(),
        mfaPolicy: z.enum(MFA_POLICIES).optional(),
        requireEmailVerification: strictBoolean.optional().meta({ description: 'New sign-ups stay Pending until they verify their email' }),
        signupPolicy: z.enum(SIGNUP_POLICIES).optional(),
        signupEmailDomains: z.array(emailDomain).max(100).optional().meta({ description: 'Replaces the list; used when `signupPolicy` is `Domains`' }),
        idpMfaTrust: strictBoolean.optional().meta({
          description: 'Let a provider sign-in whose `amr` shows MFA waive the user\'s own enrolled TOTP factor (default false: the user\'s factor is still asked)',
        }),
        defaultLocale: z.enum(LOCALES).optional().meta({ description: 'The language of pages and mails for people whose own is unknown or not offered' }),
        displayName: displayName(120).nullable().optional().meta({ description: 'The name pages and mails show; null clears it (the workspace\'s name is shown)' }),
        primaryColor: z.string().regex(/^#[0-9a-fA-F]{6}$/).nullable().optional()
          .meta({ description: '`#rrggbb` of buttons; white text on it must reach 4.5:1 (WCAG AA), else 400 `color_contrast_too_low`; null clears it' }),
        supportUrl: supportLink.nullable().optional().meta({ description: 'An https:// or mailto: link for help; null clears it' }),
        brandDisplay: z.enum(BRAND_DISPLAYS).optional().meta({
          description: 'How the page header shows the workspace: `LogoAndName` (default), `LogoOnly` (for a logo that spells the name; the name ' +
            'stays its alt text and in the page title) or `NameOnly`; without a logo the name is shown',
        }),
        passwordPolicy: z
          .object({
            minLength: z.number().int().min(12).max(128).optional(),
            rejectCommon: strictBoolean.optional(),
          })
          .optional()
          .meta({ description: 'Applies to passwords set from now on (sign-up, change, reset, invite acceptance, users created by an admin)' }),
        lockout: z
          .object({
            maxFailedAttempts: z.number().int().min(3).max(100).optional(),
            windowSeconds: z.number().int().min(60).max(86_400).optional(),
          })
          .optional()
          .meta({ description: 'Failed sign-ins of one address before login answers 429 with Retry-After; an Admin lifts it with POST users/{userId}/unlock' }),
        sessionPolicy: z
          .object({ refreshTokenLifetimeSeconds: z.number().int().min(3600).max(2_592_000).optional() })
          .optional()
          .meta({ description: 'Applies to sessions started and refresh tokens issued from now on' }),
      }),
    )
    .output(tenantOutput)
    .mutation(async ({ ctx, input }) => {
      const { passwordPolicy, lockout, sessionPolicy, ...plain } = input;
      const patch = {
        ...plain,
        passwordMinLength: passwordPolicy?.minLength,
        passwordRejectCommon: passwordPolicy?.rejectCommon,
        lockoutMaxFailedAttempts: lockout?.maxFailedAttempts,
        lockoutWindowSeconds: lockout?.windowSeconds,
        refreshTokenLifetimeSeconds: sessionPolicy?.refreshTokenLifetimeSeconds,
      };
      const tenant = await ctx.services.tenantSettings.update(ctx.scope, patch);
      return toTenantOutput(tenant, ctx.services.idp.settingsView(tenant));
    }),

  setLogo: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PUT', path: '/v1/{tenantSlug}/tenant/logo', protect: true, tags,
        summary: 'Set the workspace\'s logo: an uploaded image (base64) or an https URL fetched once',
        description:
          `Give exactly one of \`dataBase64\` (the image, at most ${MAX_LOGO_BYTES / 1024} KiB) or \`url\` (fetched once through the same address guard as ` +
          'identity-provider issuers, read no further than the limit). PNG, JPEG, WebP or GIF only, judged from the bytes; never SVG. Served at ' +
          '`GET /v1/{tenantSlug}/branding/logo`; the pages also use it as their favicon. Audited as `TenantUpdated` (`details.changes.logo`).',
        errorResponses: logoErrors,
      },
      errorReasons: logoReasons,
    })
    .input(logoInput)
    .output(tenantOutput)
    .mutation(async ({ ctx, input }) => {
      const tenant = await setLogoFrom(ctx, 'light', input);
      return toTenantOutput(tenant, ctx.services.idp.settingsView(tenant));
    }),

  deleteLogo: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/tenant/logo', protect: true, tags,
        summary: 'Remove the workspace\'s logo (pages and mails show its name alone)',
        errorResponses: adminErrors,
      },
    })
    .output(tenantOutput)
    .mutation(async ({ ctx }) => {
      const tenant = await ctx.services.logos.remove(ctx.scope, 'light');
      return toTenantOutput(tenant, ctx.services.idp.settingsView(tenant));
    }),

  setDarkLogo: securityAdminProcedure
    .meta({
      openapi: {
        method: 'PUT', path: '/v1/{tenantSlug}/tenant/logo/dark', protect: true, tags,
        summary: 'Set the logo the pages show in the dark theme (as PUT tenant/logo takes the logo)',
        description:
          'The same body, checks and limits as `PUT /v1/{tenantSlug}/tenant/logo`. Served at `GET /v1/{tenantSlug}/branding/logo/dark`; ' +
          'without it the dark theme shows the logo. Audited as `TenantUpdated` (`details.changes.darkLogo`).',
        errorResponses: logoErrors,
      },
      errorReasons: logoReasons,
    })
    .input(logoInput)
    .output(tenantOutput)
    .mutation(async ({ ctx, input }) => {
      const tenant = await setLogoFrom(ctx, 'dark', input);
      return toTenantOutput(tenant, ctx.services.idp.settingsView(tenant));
    }),

  deleteDarkLogo: securityAdminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/tenant/logo/dark', protect: true, tags,
        summary: 'Remove the dark theme\'s logo (the dark theme shows the logo again)',
        errorResponses: adminErrors,
      },
    })
    .output(tenantOutput)
    .mutation(async ({ ctx }) => {
      const tenant = await ctx.services.logos.remove(ctx.scope, 'dark');
      return toTenantOutput(tenant, ctx.services.idp.settingsView(tenant));
    }),

  deleteTenant: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE', path: '/v1/{tenantSlug}/tenant', tags: dataProtectionTags, protect: true,
        summary: 'Delete (soft) the tenant: every session ends and its routes answer 404; data is erased after USER_RETENTION_DAYS',
        description: 'Needs an Admin user access token; an API key gets 401 `user_token_required`.',
        errorResponses: { 401: 'Not signed in, or an API key', 403: 'Not an admin', 404: 'Unknown tenant', 429: 'Rate limited' },
      },
      errorReasons: { 401: ['user_token_required'] },
    })
    .output(okOutput)
    .mutation(async ({ ctx }) => {
      if (ctx.principal.kind !== 'user') {
        throw SESSION_ERRORS.userTokenRequiredToDeleteTenant();
      }
      await ctx.services.erasure.softDeleteTenant(ctx.scope);
      return OK;
    }),
});
