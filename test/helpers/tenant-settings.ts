import type { TestServer } from './server.js';

/**
 * Sets a tenant's MFA policy straight in the database (PATCH /tenant belongs to another issue;
 * the lead repoints this to the API at merge).
 */
export async function setMfaPolicy(server: TestServer, tenantSlug: string, policy: 'Disabled' | 'Optional' | 'Required'): Promise<void> {
  const rows = await server.services.orm.em.fork().execute('update tenant set mfa_policy = ? where slug = ? returning id', [policy, tenantSlug]);
  if (rows.length !== 1) throw new Error(`no tenant with slug ${tenantSlug}`);
}
