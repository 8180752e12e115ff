/**
 * Every `details.reason` of a workspace's branding (docs/web.md "Branding"). Declared once here; the
 * error constructors and the routers' `errorReasons` accept only catalog reasons (src/lib/errors.ts).
 */
export const BRANDING_REASONS = {
  /** White button text on the primary colour falls short of WCAG 2.1 AA (4.5:1). */
  colorContrastTooLow: 'color_contrast_too_low',
  /** The logo is not a PNG, JPEG, WebP or GIF image (judged by its bytes, not its label). */
  logoTypeNotAllowed: 'logo_type_not_allowed',
  /** The logo is larger than MAX_LOGO_BYTES. */
  logoTooLarge: 'logo_too_large',
  /** The logo URL could not be fetched (refused address, no answer, not 200, too slow). */
  logoUnreachable: 'logo_unreachable',
} as const;

declare module '../../lib/errors.js' {
  interface ErrorReasonCatalogs {
    branding: typeof BRANDING_REASONS;
  }
}
