import { defineErrorCatalog, reasonsOf, REQUEST_REASONS } from '../lib/errors.js';

/**
 * Every error of a workspace's branding (docs/web.md "Branding"): each entry declares once its code,
 * `details.reason` and message (src/lib/errors.ts `defineErrorCatalog`).
 */
export const BRANDING_ERRORS = defineErrorCatalog({
  /** White button text on the primary colour falls short of WCAG 2.1 AA (the message gives the ratio). */
  colorContrastTooLow: {
    code: 'BAD_REQUEST', reason: 'color_contrast_too_low',
    message: ({ colour, contrast, minimum }: { colour: string; contrast: number; minimum: number }) =>
      `White text on ${colour} has a contrast of ${contrast.toFixed(2)}:1; at least ${minimum}:1 is needed (WCAG 2.1 AA)`,
  },
  /** The logo is not a PNG, JPEG, WebP or GIF image (judged by its bytes, not its label). */
  logoTypeNotAllowed: { code: 'BAD_REQUEST', reason: 'logo_type_not_allowed', message: 'The logo must be a PNG, JPEG, WebP or GIF image' },
  /** The logo is larger than `maxBytes`. */
  logoTooLarge: { code: 'BAD_REQUEST', reason: 'logo_too_large', message: ({ maxBytes }: { maxBytes: number }) => `The logo must be at most ${maxBytes} bytes` },
  /** The logo URL could not be fetched (no answer, not 200, too slow). */
  logoUnreachable: { code: 'BAD_REQUEST', reason: 'logo_unreachable', message: 'The logo could not be fetched from that URL' },
  /** The logo URL is refused before any fetch (`problem`: why, e.g. a private address). */
  logoUrlRefused: { code: 'BAD_REQUEST', reason: 'logo_unreachable', message: ({ problem }: { problem: string }) => problem },
  /** `GET branding/logo` of a workspace without a logo (or no live workspace). */
  logoNotFound: { code: 'NOT_FOUND', reason: REQUEST_REASONS.notFound, message: 'This workspace has no logo' },
});

/** The `details.reason` of each entry of BRANDING_ERRORS, by entry name (for routers' `errorReasons`). */
export const BRANDING_REASONS = reasonsOf(BRANDING_ERRORS);

declare module '../lib/errors.js' {
  interface ErrorReasonCatalogs {
    branding: typeof BRANDING_REASONS;
  }
}
