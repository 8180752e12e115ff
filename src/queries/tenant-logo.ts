import type { EntityManager } from '@mikro-orm/postgresql';
import type { LogoContentType, LogoVariant, TenantLogo } from '../entities/tenant-logo.js';

/**
 * The queries of the `tenant_logo` table (docs/architecture.md "Rules", data access): one row per
 * workspace and variant (`light`, `dark`), scoped by its tenant. The caller owns the transaction.
 */

/** Stores (or replaces) the tenant's logo of `logo.variant`. */
export async function upsertTenantLogo(em: EntityManager, logo: TenantLogo): Promise<void> {
  await em.execute(
    `insert into tenant_logo (tenant_id, variant, content_type, bytes, etag, updated_at) values (?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, variant) do update set content_type = excluded.content_type, bytes = excluded.bytes,
         etag = excluded.etag, updated_at = excluded.updated_at`,
    [logo.tenantId, logo.variant, logo.contentType, logo.bytes, logo.etag, logo.updatedAt],
    'run',
  );
}

/** Deletes the tenant's logo of `variant`; @returns whether there was one. */
export async function deleteTenantLogo(em: EntityManager, tenantId: string, variant: LogoVariant): Promise<boolean> {
  const result = await em.execute('delete from tenant_logo where tenant_id = ? and variant = ?', [tenantId, variant], 'run');
  return (result as { affectedRows?: number }).affectedRows !== 0;
}

/**
 * The logo `GET branding/logo` (`light`) or `GET branding/logo/dark` serves for the live tenant with
 * this slug, or undefined: the dark one falls back to the light one when the tenant has none.
 */
export async function findLogoBySlug(
  em: EntityManager, slug: string, variant: LogoVariant,
): Promise<Pick<TenantLogo, 'contentType' | 'bytes' | 'etag'> | undefined> {
  const rows = await em.execute<{ content_type: LogoContentType; bytes: Buffer; etag: string }[]>(
    `select l.content_type, l.bytes, l.etag from tenant_logo l join tenant t on t.id = l.tenant_id
       where t.slug = ? and t.deleted_at is null and l.variant in ('light', ?)
       order by l.variant = ? desc limit 1`,
    [slug, variant, variant],
  );
  const row = rows[0];
  return row ? { contentType: row.content_type, bytes: row.bytes, etag: row.etag } : undefined;
}
