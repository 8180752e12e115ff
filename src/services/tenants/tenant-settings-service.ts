import type { BrandDisplay, MfaPolicy, SignupPolicy, Tenant } from '../../entities/tenant.js';
import type { Locale } from '../../lib/locales.js';
import { assertReadableButtonColour } from '../branding/branding.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import { lockLiveTenant, updateTenant } from '../../queries/tenant.js';
import { TENANT_ERRORS } from '../../errors/tenant.js';

/** The settings an admin may change with PATCH tenant; every field optional. */
export interface TenantSettingsPatch {
  /** 1 to 120 characters; the slug stays as it was derived at creation. */
  name?: string;
  mfaPolicy?: MfaPolicy;
  /** When true, users who sign up stay `Pending` until they verify their email. */
  requireEmailVerification?: boolean;
  /** Who may sign up without an invite (docs/api-rules.md "Users and sign-up"). */
  signupPolicy?: SignupPolicy;
  /** The email domains sign-up is open to under `Domains`; stored lower case, without duplicates. */
  signupEmailDomains?: string[];
  /** When true, a provider sign-in whose `amr` shows MFA waives the user's own TOTP factor (docs/idp.md "MFA"). */
  idpMfaTrust?: boolean;
  /** The language of the pages and mails when the person's own is unknown (docs/web.md "Languages"). */
  defaultLocale?: Locale;
  /** The name pages and mails show (1 to 120 characters); null: the workspace's name (docs/web.md "Branding"). */
  displayName?: string | null;
  /** `#rrggbb` of buttons (lower-cased; white text on it must reach WCAG AA); null: the service's colours. */
  primaryColor?: string | null;
  /** An https or mailto link for help shown on pages and in members' mails; null: none. */
  supportUrl?: string | null;
  /** How the page header shows the workspace: logo and name, logo only, name only (docs/web.md "Branding"). */
  brandDisplay?: BrandDisplay;
  /** `passwordPolicy.minLength`: the shortest password accepted, 12 to 128 characters (docs/api-rules.md "Workspace policies"). */
  passwordMinLength?: number;
  /** `passwordPolicy.rejectCommon`: refuse passwords of the bundled common-password list. */
  passwordRejectCommon?: boolean;
  /** `lockout.maxFailedAttempts`: failed sign-ins of one address before login answers 429, 3 to 100. */
  lockoutMaxFailedAttempts?: number;
  /** `lockout.windowSeconds`: how long failures count and the lockout lasts, 60 to 86400 seconds. */
  lockoutWindowSeconds?: number;
  /** `sessionPolicy.refreshTokenLifetimeSeconds`: the refresh-token lifetime of new sessions, 3600 to 2592000 seconds. */
  refreshTokenLifetimeSeconds?: number;
}

type SettingName = keyof TenantSettingsPatch;
/** Each setting with the name `details.changes` gives it: the field of PATCH tenant's body (dotted inside a policy object). */
const SETTINGS: Record<SettingName, string> = {
  name: 'name', mfaPolicy: 'mfaPolicy', requireEmailVerification: 'requireEmailVerification', signupPolicy: 'signupPolicy',
  signupEmailDomains: 'signupEmailDomains', idpMfaTrust: 'idpMfaTrust', defaultLocale: 'defaultLocale', displayName: 'displayName',
  primaryColor: 'primaryColor', supportUrl: 'supportUrl', brandDisplay: 'brandDisplay',
  passwordMinLength: 'passwordPolicy.minLength', passwordRejectCommon: 'passwordPolicy.rejectCommon',
  lockoutMaxFailedAttempts: 'lockout.maxFailedAttempts', lockoutWindowSeconds: 'lockout.windowSeconds',
  refreshTokenLifetimeSeconds: 'sessionPolicy.refreshTokenLifetimeSeconds',
};

/**
 * A tenant's own settings (GET/PATCH tenant in the OpenAPI document). Its changes take the request's
 * scope first (RequestScope: the workspace, the actor, the metadata) and are audited with it.
 */
export class TenantSettingsService {
  constructor(private readonly audit: AuditService) {}

  /**
   * Applies the given settings under a row lock and audits `TenantUpdated` with
   * `details.changes` = `{ field: { from, to } }` for the fields whose value changed. A patch that
   * changes nothing writes nothing and records no event.
   * @returns the tenant as stored afterwards.
   * @throws ApiError 400 `color_contrast_too_low` (assertReadableButtonColour), 404 when the tenant
   *   was deleted meanwhile.
   */
  async update(scope: RequestScope, patch: TenantSettingsPatch): Promise<Tenant> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    if (patch.primaryColor) {
      patch = { ...patch, primaryColor: patch.primaryColor.toLowerCase() };
      assertReadableButtonColour(patch.primaryColor!);
    }
    return em.transactional(async (tx) => {
      const tenant = await lockLiveTenant(tx, tenantId);
      if (!tenant) throw TENANT_ERRORS.tenantNotFound();
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      const update: Partial<Tenant> = {};
      for (const field of Object.keys(SETTINGS) as SettingName[]) {
        const next = field === 'signupEmailDomains' && patch.signupEmailDomains
          ? [...new Set(patch.signupEmailDomains.map((d) => d.toLowerCase()))]
          : patch[field];
        if (next === undefined || JSON.stringify(next) === JSON.stringify(tenant[field])) continue;
        changes[SETTINGS[field]] = { from: tenant[field], to: next };
        Object.assign(update, { [field]: next });
      }
      if (Object.keys(changes).length === 0) return tenant;
      update.updatedAt = new Date();
      await updateTenant(tx, tenant.id, update);
      await this.audit.record(withEm(scope, tx), {
        action: 'TenantUpdated', target: { type: 'tenant', id: tenant.id },
        details: { changes },
      });
      return { ...tenant, ...update };
    });
  }
}
