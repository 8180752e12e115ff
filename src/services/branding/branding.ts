import { wcagContrast } from 'culori';
import type { Tenant } from '../../entities/tenant.js';
import { BRANDING_ERRORS } from './branding-errors.js';

/** The contrast white button text must reach on a workspace's primary colour (WCAG 2.1 AA, normal text). */
export const MIN_BUTTON_CONTRAST = 4.5;

/** How a workspace's pages and mails look (docs/web.md "Branding"). */
export interface Branding {
  /** The name to show: the display name, else the workspace's name. */
  displayName: string;
  /** Absolute URL of the logo with its version (`?v=<etag>`, so caches refresh on change), or null. */
  logoUrl: string | null;
  /** `#rrggbb`, or null for the service's own colours. */
  primaryColor: string | null;
  /** An https or mailto link, or null. */
  supportUrl: string | null;
}

/**
 * The branding of `tenant` as pages and mails use it.
 * @param baseUrl `PUBLIC_URL` for absolute logo URLs (mails), or '' for same-origin paths (pages).
 */
export function brandingOf(tenant: Pick<Tenant, 'slug' | 'name' | 'displayName' | 'primaryColor' | 'supportUrl' | 'logoEtag'>, baseUrl: string): Branding {
  return {
    displayName: tenant.displayName ?? tenant.name,
    logoUrl: tenant.logoEtag ? `${baseUrl}/v1/${encodeURIComponent(tenant.slug)}/branding/logo?v=${tenant.logoEtag.slice(0, 16)}` : null,
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
