import type { TestServer } from './server.js';

/**
 * Test fixture: sets a tenant's MFA policy straight in the database, for tests about login
 * behaviour under a policy. PATCH /tenant itself is tested in tenant-admin.test.ts.
 */
export async function setMfaPolicy(server: TestServer, tenantSlug: string, policy: 'Disabled' | 'Optional' | 'Required'): Promise<void> {
  const rows = await server.services.orm.em.fork().execute('update tenant set mfa_policy = ? where slug = ? returning id', [policy, tenantSlug]);
  if (rows.length !== 1) throw new Error(`no tenant with slug ${tenantSlug}`);
}
