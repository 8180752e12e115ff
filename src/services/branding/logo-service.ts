import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { fileTypeFromBuffer } from 'file-type';
import { LRUCache } from 'lru-cache';
import { isIP } from 'node:net';
import type * as oidc from 'openid-client';
import type { Tenant } from '../../entities/tenant.js';
import { LOGO_CONTENT_TYPES, type LogoContentType, type LogoVariant, type TenantLogo } from '../../entities/tenant-logo.js';
import { withEm, type RequestScope } from '../../lib/request-scope.js';
import type { AuditService } from '../audit/audit-service.js';
import { isLoopbackHttpUrl } from '../../config.js';
import { providerFetch, ResponseTooLargeError } from '../idp/idp-outbound.js';
import { isLoopbackHost, isPublicAddress } from '../webhooks/webhook-target.js';
import { lockLiveTenant, updateTenant } from '../../queries/tenant.js';
import { BRANDING_ERRORS } from '../../errors/branding.js';
import { deleteTenantLogo, findLogoBySlug, upsertTenantLogo } from '../../queries/tenant-logo.js';
import { TENANT_ERRORS } from '../../errors/tenant.js';

/**
 * Largest logo stored, in bytes (256 KiB). Its base64 is larger than the common 100 KiB body limit:
 * the logo routes have their own ({@link LOGO_MAX_BODY_BYTES}).
 */
export const MAX_LOGO_BYTES = 262_144;

/**
 * Largest body of setting a logo (PUT tenant/logo and tenant/logo/dark, on REST and /trpc), in
 * bytes: a {@link MAX_LOGO_BYTES} image is 349,528 characters of base64, plus the JSON around it.
 * Every other route keeps the common limit (src/rest/http-hardening.ts `MAX_BODY_BYTES`).
 */
export const LOGO_MAX_BODY_BYTES = 352 * 1024;

/** Most bytes of logos one instance keeps in memory to serve them (docs/web.md "Branding"). */
export const LOGO_CACHE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * How long an instance serves a logo from memory before reading it again, in milliseconds: a change
 * made on another instance shows there within this time (at once for a `?v=` link of the new version).
 */
export const LOGO_CACHE_TTL_MS = 30_000;

/** A logo as `GET branding/logo` serves it. */
export type ServedLogo = Pick<TenantLogo, 'contentType' | 'bytes' | 'etag'>;

/**
 * The shortest time between two reads of one logo for links naming another version than the
 * remembered one, in milliseconds: made-up `?v=` values cannot turn the cache into a read per request.
 */
export const LOGO_RECHECK_MS = 1_000;

/** What the instance remembers of one slug and variant: the logo, or that there is none, and when it was read. */
interface CachedLogo {
  logo: ServedLogo | undefined;
  readAt: number;
}

/** The `tenant` field that names each variant's stored version, and its name in `details.changes`. */
const ETAG_FIELD = { light: 'logoEtag', dark: 'darkLogoEtag' } as const satisfies Record<LogoVariant, keyof Tenant>;
const CHANGE_NAME = { light: 'logo', dark: 'darkLogo' } as const satisfies Record<LogoVariant, string>;

/** Longest wait for a logo URL's answer, in milliseconds. */
export const LOGO_FETCH_TIMEOUT_MS = 5_000;

/**
 * A workspace's logos (docs/web.md "Branding"), `light` (the logo) and `dark` (for the dark theme):
 * uploaded bytes or an https URL fetched once, checked the same way (type judged from the bytes by
 * `file-type`: PNG, JPEG, WebP or GIF, never SVG; at most {@link MAX_LOGO_BYTES}), stored in
 * `tenant_logo` and served by `GET /v1/{tenantSlug}/branding/logo` (and `…/logo/dark`), from memory
 * for {@link LOGO_CACHE_TTL_MS} per instance. Every change is audited as `TenantUpdated` with
 * `details.changes.logo` (or `darkLogo`).
 * Its changes take the request's scope first (RequestScope: the workspace, the actor, the metadata)
 * and are audited with it.
 */
export class LogoService {
  private readonly fetchLogo: oidc.CustomFetch;
  /** Served logos by `slug` and variant, bounded by their bytes ({@link LOGO_CACHE_MAX_BYTES}). */
  private readonly served = new LRUCache<string, CachedLogo>({
    maxSize: LOGO_CACHE_MAX_BYTES,
    sizeCalculation: (entry) => (entry.logo?.bytes.length ?? 0) + 256,
    ttl: LOGO_CACHE_TTL_MS,
  });

  /**
   * @param allowPrivateTargets `IDP_ALLOW_PRIVATE_ISSUERS`: logo URLs follow the issuers' address
   *   guard (no loopback, private or link-local address unless it is set).
   */
  constructor(
    private readonly audit: AuditService,
    private readonly allowPrivateTargets: boolean,
  ) {
    this.fetchLogo = providerFetch(allowPrivateTargets, MAX_LOGO_BYTES);
  }

  /**
   * Stores `bytes` as the tenant's logo of `variant`.
   * @returns the tenant as stored afterwards.
   * @throws ApiError 400 `logo_too_large`, `logo_type_not_allowed`; 404 when the tenant was deleted.
   */
  async upload(scope: RequestScope, variant: LogoVariant, bytes: Buffer): Promise<Tenant> {
    const contentType = await checkedLogoType(bytes);
    return this.store(scope, variant, bytes, contentType);
  }

  /**
   * Fetches the image at `url` once (https; the issuers' address guard, no redirects, a
   * {@link LOGO_FETCH_TIMEOUT_MS} timeout, reading stopped at the first chunk past
   * {@link MAX_LOGO_BYTES}) and stores it as {@link upload} does.
   * @throws ApiError 400 `logo_unreachable` (refused address, no answer, not 200),
   *   `logo_too_large`, `logo_type_not_allowed`.
   */
  async fetchFrom(scope: RequestScope, variant: LogoVariant, url: string): Promise<Tenant> {
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
    } catch (err) {
      // the fetch stopped reading at the first chunk over the limit (or at a Content-Length over it)
      if (err instanceof ResponseTooLargeError) throw BRANDING_ERRORS.logoTooLarge({ maxBytes: MAX_LOGO_BYTES });
      throw BRANDING_ERRORS.logoUnreachable();
    }
    return this.upload(scope, variant, bytes);
  }

  /**
   * Removes the tenant's logo of `variant` (without the light one pages and mails show the name
   * alone; without the dark one the dark theme shows the light one).
   * @returns the tenant as stored afterwards (unchanged and unaudited when it had none).
   */
  async remove(scope: RequestScope, variant: LogoVariant): Promise<Tenant> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    const field = ETAG_FIELD[variant];
    const tenant = await em.transactional(async (tx) => {
      const tenant = await lockLiveTenant(tx, tenantId);
      if (!tenant) throw TENANT_ERRORS.tenantNotFound();
      if (!(await deleteTenantLogo(tx, tenant.id, variant)) && tenant[field] === null) return tenant;
      const update: Partial<Tenant> = { [field]: null, updatedAt: new Date() };
      await updateTenant(tx, tenant.id, update);
      await this.audit.record(withEm(scope, tx), {
        action: 'TenantUpdated', target: { type: 'tenant', id: tenant.id },
        details: { changes: { [CHANGE_NAME[variant]]: { from: tenant[field], to: null } } },
      });
      return { ...tenant, ...update };
    });
    this.forget(tenant.slug);
    return tenant;
  }

  /**
   * The logo `GET /v1/{tenantSlug}/branding/logo` serves (`light`; `dark` falls back to the light
   * one), or undefined (no live tenant or no logo). Kept in memory for {@link LOGO_CACHE_TTL_MS};
   * read again when `version` (the `?v=` of the link, a prefix of the ETag) names another version
   * than the remembered one (at most once per {@link LOGO_RECHECK_MS}), so a link to a logo just
   * changed on another instance gets the new bytes.
   */
  async find(em: EntityManager, slug: string, variant: LogoVariant, version?: string): Promise<ServedLogo | undefined> {
    const key = `${variant}:${slug}`;
    const cached = this.served.get(key);
    if (cached) {
      const current = version === undefined || (cached.logo !== undefined && cached.logo.etag.startsWith(version));
      if (current || Date.now() - cached.readAt < LOGO_RECHECK_MS) return cached.logo;
    }
    const logo = await findLogoBySlug(em, slug, variant);
    this.served.set(key, { logo, readAt: Date.now() });
    return logo;
  }

  /** Drops what this instance remembers of the slug's logos (after a change here). */
  private forget(slug: string): void {
    for (const variant of ['light', 'dark'] as const) this.served.delete(`${variant}:${slug}`);
  }

  private async store(
    scope: RequestScope, variant: LogoVariant, bytes: Buffer, contentType: LogoContentType,
  ): Promise<Tenant> {
    const { em } = scope;
    const tenantId = scope.tenant.id;
    const etag = createHash('sha256').update(bytes).digest('hex');
    const field = ETAG_FIELD[variant];
    const tenant = await em.transactional(async (tx) => {
      const tenant = await lockLiveTenant(tx, tenantId);
      if (!tenant) throw TENANT_ERRORS.tenantNotFound();
      if (tenant[field] === etag) return tenant;
      const now = new Date();
      await upsertTenantLogo(tx, { tenantId: tenant.id, variant, contentType, bytes, etag, updatedAt: now });
      const update: Partial<Tenant> = { [field]: etag, updatedAt: now };
      await updateTenant(tx, tenant.id, update);
      await this.audit.record(withEm(scope, tx), {
        action: 'TenantUpdated', target: { type: 'tenant', id: tenant.id },
        details: { changes: { [CHANGE_NAME[variant]]: { from: tenant[field], to: etag } }, contentType, bytes: bytes.length },
      });
      return { ...tenant, ...update };
    });
    this.forget(tenant.slug);
    return tenant;
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
