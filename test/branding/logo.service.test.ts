import { describe, expect, it } from 'vitest';
import { brandingOf } from '../../src/services/branding/branding.js';
import { MAX_LOGO_BYTES } from '../../src/services/branding/logo-service.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: a workspace's logo (LogoService; docs/web.md "Branding"): checked by its bytes, stored,
 * found by slug, versioned in the branding URL, audited, removed.
 */

const suite = useServices();
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

describe('LogoService', () => {
  it('stores a PNG, serves it by slug under a versioned URL, and removes it', async () => {
    const { tenant, actor } = await suite.createTenant();
    const stored = await suite.services.logos.upload(suite.scope(tenant, actor), 'light', PNG);
    expect(stored.logoEtag).toBeTruthy();
    const found = await suite.services.logos.find(suite.em(), tenant.slug, 'light');
    expect(found?.contentType).toBe('image/png');
    expect(Buffer.from(found!.bytes).equals(PNG)).toBe(true);
    expect(brandingOf(stored, 'https://id.example.com').logoUrl)
      .toBe(`https://id.example.com/v1/${tenant.slug}/branding/logo?v=${stored.logoEtag!.slice(0, 16)}`);
    expect((await suite.auditOf(tenant.id, 'TenantUpdated'))[0]?.details).toEqual({ changes: { logo: { from: null, to: stored.logoEtag } }, contentType: 'image/png', bytes: PNG.length });

    const removed = await suite.services.logos.remove(suite.scope(tenant, actor), 'light');
    expect(removed.logoEtag).toBeNull();
    expect(await suite.services.logos.find(suite.em(), tenant.slug, 'light')).toBeUndefined();
    expect(brandingOf(removed, '').logoUrl).toBeNull();
  });

  it('refuses SVG and oversized files by their bytes, and stores nothing', async () => {
    const { tenant, actor } = await suite.createTenant();
    await expect(suite.services.logos.upload(suite.scope(tenant, actor), 'light', SVG)).rejects.toMatchObject({ details: { reason: 'logo_type_not_allowed' } });
    const huge = Buffer.concat([PNG, Buffer.alloc(MAX_LOGO_BYTES)]);
    await expect(suite.services.logos.upload(suite.scope(tenant, actor), 'light', huge)).rejects.toMatchObject({ details: { reason: 'logo_too_large' } });
    expect(await suite.services.logos.find(suite.em(), tenant.slug, 'light')).toBeUndefined();
    expect(await suite.auditOf(tenant.id, 'TenantUpdated')).toEqual([]);
  });

  it('keeps each workspace\'s logo to its own slug', async () => {
    const first = await suite.createTenant();
    const second = await suite.createTenant();
    await suite.services.logos.upload(suite.scope(first.tenant, first.actor), 'light', PNG);
    expect(await suite.services.logos.find(suite.em(), second.tenant.slug, 'light')).toBeUndefined();
  });
});
