import { wcagContrast } from 'culori';
import type { BrandDisplay, Tenant } from '../../entities/tenant.js';
import { BRANDING_ERRORS } from '../../errors/branding.js';

/** The contrast white button text must reach on a workspace's primary colour (WCAG 2.1 AA, normal text). */
export const MIN_BUTTON_CONTRAST = 4.5;

/** How many hex digits of a logo's ETag its links carry as `?v=` (the version a served logo is checked against). */
export const LOGO_VERSION_LENGTH = 16;

/** How a workspace's pages and mails look (docs/web.md "Branding"). */
export interface Branding {
  /** The name to show: the display name, else the workspace's name. */
  displayName: string;
  /** Absolute URL of the logo with its version (`?v=<etag>`, so caches refresh on change), or null. */
  logoUrl: string | null;
  /** The same for the logo of the dark theme (`…/branding/logo/dark?v=`), or null: the dark theme shows `logoUrl`. */
  darkLogoUrl: string | null;
  /** How the page header shows the workspace: logo and name, logo only (name as its alt text), name only. */
  brandDisplay: BrandDisplay;
  /** `#rrggbb`, or null for the service's own colours. */
  primaryColor: string | null;
  /** An https or mailto link, or null. */
  supportUrl: string | null;
}

/**
 * The branding of `tenant` as pages and mails use it.
 * @param baseUrl `PUBLIC_URL` for absolute logo URLs (mails), or '' for same-origin paths (pages).
 */
export function brandingOf(
  tenant: Pick<Tenant, 'slug' | 'name' | 'displayName' | 'primaryColor' | 'supportUrl' | 'logoEtag' | 'darkLogoEtag' | 'brandDisplay'>,
  baseUrl: string,
): Branding {
  const logoPath = `${baseUrl}/v1/${encodeURIComponent(tenant.slug)}/branding/logo`;
  return {
    displayName: tenant.displayName ?? tenant.name,
    logoUrl: tenant.logoEtag ? `${logoPath}?v=${tenant.logoEtag.slice(0, LOGO_VERSION_LENGTH)}` : null,
    darkLogoUrl: tenant.darkLogoEtag ? `${logoPath}/dark?v=${tenant.darkLogoEtag.slice(0, LOGO_VERSION_LENGTH)}` : null,
    brandDisplay: tenant.brandDisplay,
    primaryColor: tenant.primaryColor,
    supportUrl: tenant.supportUrl,
  };
}

/**
 * Refuses a primary colour on which white button text would fall short of WCAG 2.1 AA
 * ({@link MIN_BUTTON_CONTRAST}:1, contrast ratio by culori's `wcagContrast`).
 * @throws ApiError 400 `color_contrast_too_low` (the message gives the ratio).
 */
export function assertReadableButtonColour(colour: string): void {
  const contrast = wcagContrast('#ffffff', colour);
  if (contrast < MIN_BUTTON_CONTRAST) {
    throw BRANDING_ERRORS.colorContrastTooLow({ colour, contrast, minimum: MIN_BUTTON_CONTRAST });
  }
}
