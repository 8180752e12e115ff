import { EntitySchema } from '@mikro-orm/core';

/** The image types a workspace logo may have (docs/web.md "Branding"); never SVG (it can carry script). */
export const LOGO_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type LogoContentType = (typeof LOGO_CONTENT_TYPES)[number];

/**
 * The logos a workspace may have (docs/web.md "Branding"): `light`, the logo (shown in the light
 * theme, in mails and as the pages' favicon), and `dark`, an optional one for the dark theme.
 */
export const LOGO_VARIANTS = ['light', 'dark'] as const;
export type LogoVariant = (typeof LOGO_VARIANTS)[number];

/** A workspace's logo: its bytes, type as judged from them, and strong ETag (SHA-256, hex, quoted when sent). */
export interface TenantLogo {
  tenantId: string;
  variant: LogoVariant;
  contentType: LogoContentType;
  bytes: Buffer;
  etag: string;
  updatedAt: Date;
}

export const TenantLogoSchema = new EntitySchema<TenantLogo>({
  name: 'TenantLogo',
  tableName: 'tenant_logo',
  properties: {
    tenantId: { type: 'uuid', primary: true },
    variant: { type: 'string', length: 8, primary: true, default: 'light' },
    contentType: { type: 'string', length: 32 },
    bytes: { type: 'blob' },
    etag: { type: 'string', length: 64 },
    updatedAt: { type: 'Date' },
  },
});
