import { describe, expect, it } from 'vitest';
import { findLiveTenantBySlug } from '../../src/queries/tenant.js';
import { lockoutPolicyOf } from '../../src/services/rate-limits/account-lockout.js';
import { findLiveUserById } from '../../src/queries/user.js';
import { PASSWORD, unique } from '../helpers/api.js';
import { useServices } from '../helpers/services.js';

/**
 * Below HTTP: a workspace's creation (TenantService.create: one transaction with its first Admin,
 * their session and the verification mail) and its settings (TenantSettingsService.update: audited
 * as a diff, nothing for no change, refused colours).
 */

const suite = useServices();

describe('TenantService.create', () => {
  it('creates the workspace with an unverified Admin signed in, and mails the verification link', async () => {
    await suite.takeQueued();
    const { tenant, admin, tokens } = await suite.createTenant();
    expect(await findLiveTenantBySlug(suite.em(), tenant.slug)).toMatchObject({ id: tenant.id, plan: 'Free', mfaPolicy: 'Optional' });
    expect(await findLiveUserById(suite.em(), tenant.id, admin.id)).toMatchObject({ role: 'Admin', status: 'Active', emailVerifiedAt: null });
    expect(await suite.services.sessions.authenticationOf(suite.em(), tenant.id, tokens.sessionId)).toBeDefined();
    const { mail } = await suite.takeQueued();
    expect(mail.map((m) => m.to)).toEqual([admin.email]);
    expect(mail[0]?.text).toContain(`/app/${tenant.slug}/verify-email?token=`);
    expect((await suite.auditOf(tenant.id, 'TenantCreated'))[0]?.details).toEqual({ slug: tenant.slug, name: tenant.name });
  });

  it('refuses a name whose slug is taken (slug_taken) and leaves nothing of the attempt', async () => {
    const { tenant } = await suite.createTenant();
    const email = `second-${unique()}@example.com`;
    await suite.takeQueued();
    await expect(suite.services.tenants.create(suite.em(), { name: tenant.name.toUpperCase(), email, password: PASSWORD }, suite.meta))
      .rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'slug_taken' } });
    expect((await suite.takeQueued()).mail).toEqual([]);
    expect(await suite.auditOf(tenant.id, 'UserSignup')).toHaveLength(1);
  });
});

describe('TenantSettingsService.update', () => {
  it('audits the changed fields as from/to, and writes nothing for a patch that changes nothing', async () => {
    const { tenant, actor } = await suite.createTenant();
    const updated = await suite.services.tenantSettings.update(suite.scope(tenant, actor), { mfaPolicy: 'Required', lockoutMaxFailedAttempts: 5, name: tenant.name });
    expect(updated).toMatchObject({ mfaPolicy: 'Required', lockoutMaxFailedAttempts: 5, slug: tenant.slug });
    const [event] = await suite.auditOf(tenant.id, 'TenantUpdated');
    expect(event?.details).toEqual({ changes: { mfaPolicy: { from: 'Optional', to: 'Required' }, 'lockout.maxFailedAttempts': { from: 10, to: 5 } } });
    await suite.services.tenantSettings.update(suite.scope(tenant, actor), { mfaPolicy: 'Required' });
    expect(await suite.auditOf(tenant.id, 'TenantUpdated')).toHaveLength(1);
    expect(lockoutPolicyOf(await findLiveTenantBySlug(suite.em(), tenant.slug))).toEqual({ lockoutMaxFailedAttempts: 5, lockoutWindowSeconds: tenant.lockoutWindowSeconds });
  });

  it('refuses a button colour white text cannot be read on, and changes nothing', async () => {
    const { tenant, actor } = await suite.createTenant();
    await expect(suite.services.tenantSettings.update(suite.scope(tenant, actor), { primaryColor: '#ffff00', displayName: 'Yellow' }))
      .rejects.toMatchObject({ details: { reason: 'color_contrast_too_low' } });
    expect(await findLiveTenantBySlug(suite.em(), tenant.slug)).toMatchObject({ primaryColor: null, displayName: null });
  });
});
