import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { fileTypeFromBuffer } from 'file-type';
import { isIP } from 'node:net';
import type * as oidc from 'openid-client';
import type { Tenant } from '../../entities/tenant.js';
import { LOGO_CONTENT_TYPES, type LogoContentType, type TenantLogo } from '../../entities/tenant-logo.js';
import type { Actor, RequestMeta } from '../../lib/request-meta.js';
import type { AuditService } from '../audit/audit-service.js';
import { isLoopbackHttpUrl } from '../../config.js';
import { providerFetch } from '../idp/idp-outbound.js';
import { isLoopbackHost, isPublicAddress } from '../webhooks/webhook-target.js';
import { lockLiveTenant, updateTenant } from '../tenants/tenant-queries.js';
import { BRANDING_ERRORS } from './branding-errors.js';
import { deleteTenantLogo, findLogoBySlug, upsertTenantLogo } from './tenant-logo-queries.js';
import { TENANT_ERRORS } from '../tenants/tenant-errors.js';

/** Largest logo stored, in bytes (64 KiB: its base64 fits the 100 KiB JSON body limit). */
export const MAX_LOGO_BYTES = 65_536;

/** Longest wait for a logo URL's answer, in milliseconds. */
export const LOGO_FETCH_TIMEOUT_MS = 5_000;

/**
 * A workspace's logo (docs/web.md "Branding"): uploaded bytes or an https URL fetched once, checked
 * the same way (type judged from the bytes by `file-type`: PNG, JPEG, WebP or GIF, never SVG; at most
 * {@link MAX_LOGO_BYTES}), stored in `tenant_logo` and served by `GET /v1/{tenantSlug}/branding/logo`.
 * Every change is audited as `TenantUpdated` with `details.changes.logo`.
 */
export class LogoService {
  private readonly fetchLogo: oidc.CustomFetch;

  /**
   * @param allowPrivateTargets `IDP_ALLOW_PRIVATE_ISSUERS`: logo URLs follow the issuers' address
   *   guard (no loopback, private or link-local address unless it is set).
   */
  constructor(
    private readonly audit: AuditService,
    private readonly allowPrivateTargets: boolean,
  ) {
    this.fetchLogo = providerFetch(allowPrivateTargets);
  }

  /**
   * Stores `bytes` as the tenant's logo.
   * @returns the tenant as stored afterwards.
   * @throws ApiError 400 `logo_too_large`, `logo_type_not_allowed`; 404 when the tenant was deleted.
   */
  async upload(em: EntityManager, tenantId: string, bytes: Buffer, actor: Actor, meta: RequestMeta): Promise<Tenant> {
    const contentType = await checkedLogoType(bytes);
    return this.store(em, tenantId, bytes, contentType, actor, meta);
  }

  /**
   * Fetches the image at `url` once (https; the issuers' address guard, no redirects, a
   * {@link LOGO_FETCH_TIMEOUT_MS} timeout) and stores it as {@link upload} does.
   * @throws ApiError 400 `logo_unreachable` (refused address, no answer, not 200),
   *   `logo_too_large`, `logo_type_not_allowed`.
   */
  async fetchFrom(em: EntityManager, tenantId: string, url: string, actor: Actor, meta: RequestMeta): Promise<Tenant> {
    const problem = logoUrlProblem(url, this.allowPrivateTargets);
    if (problem) throw BRANDING_ERRORS.logoUrlRefused({ problem });
    let bytes: Buffer;
    try {
      const res = await this.fetchLogo(url, {
        method: 'GET', headers: { accept: 'image/png, image/jpeg, image/webp, image/gif' }, body: undefined, redirect: 'manual',
        signal: AbortSignal.timeout(LOGO_FETCH_TIMEOUT_MS),
      } as oidc.CustomFetchOptions);
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      bytes = Buffer.from(await res.arrayBuffer());
    } catch {
      throw BRANDING_ERRORS.logoUnreachable();
    }
    return this.upload(em, tenantId, bytes, actor, meta);
  }

  /**
   * Removes the tenant's logo (pages and mails show its name alone).
   * @returns the tenant as stored afterwards (unchanged and unaudited when it had none).
   */
  async remove(em: EntityManager, tenantId: string, actor: Actor, meta: RequestMeta): Promise<Tenant> {
    return em.transactional(async (tx) => {
      const tenant = await lockLiveTenant(tx, tenantId);
      if (!tenant) throw TENANT_ERRORS.tenantNotFound();
      if (!(await deleteTenantLogo(tx, tenant.id)) && tenant.logoEtag === null) return tenant;
      const update: Partial<Tenant> = { logoEtag: null, updatedAt: new Date() };
      await updateTenant(tx, tenant.id, update);
      await this.audit.record(tx, {
        tenantId: tenant.id, action: 'TenantUpdated', actor, target: { type: 'tenant', id: tenant.id }, meta,
        details: { changes: { logo: { from: tenant.logoEtag, to: null } } },
      });
      return { ...tenant, ...update };
    });
  }

  /** The logo `GET /v1/{tenantSlug}/branding/logo` serves, or undefined (no live tenant or no logo). */
  async find(em: EntityManager, slug: string): Promise<Pick<TenantLogo, 'contentType' | 'bytes' | 'etag'> | undefined> {
    return findLogoBySlug(em, slug);
  }

  private async store(em: EntityManager, tenantId: string, bytes: Buffer, contentType: LogoContentType, actor: Actor, meta: RequestMeta): Promise<Tenant> {
    const etag = createHash('sha256').update(bytes).digest('hex');
    return em.transactional(async (tx) => {
      const tenant = await lockLiveTenant(tx, tenantId);
      if (!tenant) throw TENANT_ERRORS.tenantNotFound();
      if (tenant.logoEtag === etag) return tenant;
      const now = new Date();
      await upsertTenantLogo(tx, { tenantId: tenant.id, contentType, bytes, etag, updatedAt: now });
      const update: Partial<Tenant> = { logoEtag: etag, updatedAt: now };
      await updateTenant(tx, tenant.id, update);
      await this.audit.record(tx, {
        tenantId: tenant.id, action: 'TenantUpdated', actor, target: { type: 'tenant', id: tenant.id }, meta,
        details: { changes: { logo: { from: tenant.logoEtag, to: etag } }, contentType, bytes: bytes.length },
      });
      return { ...tenant, ...update };
    });
  }
}

/**
 * The image type of `bytes` as judged from their content (magic numbers, `file-type`), when it is
 * one a logo may have and the size is within {@link MAX_LOGO_BYTES}.
 * @throws ApiError 400 `logo_too_large`, `logo_type_not_allowed`.
 */
export async function checkedLogoType(bytes: Buffer): Promise<LogoContentType> {
  if (bytes.length > MAX_LOGO_BYTES) throw BRANDING_ERRORS.logoTooLarge({ maxBytes: MAX_LOGO_BYTES });
  const detected = (await fileTypeFromBuffer(bytes))?.mime;
  const allowed = LOGO_CONTENT_TYPES.find((type) => type === detected);
  if (!allowed) throw BRANDING_ERRORS.logoTypeNotAllowed();
  return allowed;
}

/**
 * Why a logo URL is refused before any request, or undefined: it must be an absolute `https://` URL
 * without credentials (`http://` only on a loopback host when private targets are allowed), and,
 * unless they are, not name a loopback, private or link-local address (host names are checked
 * again per resolved address when fetched).
 */
export function logoUrlProblem(raw: string, allowPrivateTargets: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'The logo URL must be an absolute URL';
  }
  if (url.username || url.password) return 'The logo URL must not carry credentials';
  if (url.protocol === 'http:' && allowPrivateTargets && isLoopbackHttpUrl(url)) return undefined;
  if (url.protocol !== 'https:') return 'The logo URL must be an https:// URL';
  const bare = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivateTargets && (isLoopbackHost(url.hostname) || (isIP(bare) !== 0 && !isPublicAddress(bare)))) {
    return 'The logo URL points at a private, loopback or link-local address';
  }
  return undefined;
}
