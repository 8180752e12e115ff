import type { EntityManager } from '@mikro-orm/postgresql';
import { SsoConnectionDomainSchema, SsoConnectionSchema, type SsoConnection, type SsoProtocol } from '../entities/sso.js';

/**
 * The queries of the `sso_connection` and `sso_connection_domain` tables (docs/architecture.md
 * "Rules", data access). Each function takes the caller's entity manager (pass the transaction when
 * it must run in one); every statement is scoped by tenant id.
 */

/** A connection with its domains, sorted. */
export type SsoConnectionWithDomains = SsoConnection & { domains: string[] };

type ConnectionRow = {
  id: string; tenant_id: string; name: string; protocol: SsoProtocol; organization_id: string | null; default_organization_roles: string[];
  provider_performs_mfa: boolean; saml_idp_entity_id: string | null; saml_sso_url: string | null; saml_certificates: string[] | null; saml_metadata_url: string | null;
  sp_private_key_enc: string | null; sp_certificate: string | null; sign_authn_requests: boolean;
  oidc_issuer: string | null; oidc_client_id: string | null; oidc_client_secret_enc: string | null; created_at: Date; updated_at: Date;
  domains: string[] | null;
};

const SELECT_WITH_DOMAINS = `select c.*, (select array_agg(d.domain order by d.domain) from sso_connection_domain d
    where d.connection_id = c.id and d.tenant_id = c.tenant_id) as domains
  from sso_connection c`;

function fromRow(row: ConnectionRow): SsoConnectionWithDomains {
  return {
    id: row.id, tenantId: row.tenant_id, name: row.name, protocol: row.protocol, organizationId: row.organization_id,
    defaultOrganizationRoles: row.default_organization_roles, providerPerformsMfa: row.provider_performs_mfa,
    samlIdpEntityId: row.saml_idp_entity_id, samlSsoUrl: row.saml_sso_url, samlCertificates: row.saml_certificates, samlMetadataUrl: row.saml_metadata_url,
    spPrivateKeyEnc: row.sp_private_key_enc, spCertificate: row.sp_certificate, signAuthnRequests: row.sign_authn_requests,
    oidcIssuer: row.oidc_issuer, oidcClientId: row.oidc_client_id, oidcClientSecretEnc: row.oidc_client_secret_enc,
    createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at), domains: row.domains ?? [],
  };
}

/** Inserts a connection (without its domains: {@link replaceConnectionDomains}). */
export async function insertConnection(em: EntityManager, connection: SsoConnection): Promise<void> {
  await em.insert(SsoConnectionSchema, connection);
}

/** The tenant's connections with their domains, oldest first. */
export async function findConnections(em: EntityManager, tenantId: string): Promise<SsoConnectionWithDomains[]> {
  const rows = (await em.execute(`${SELECT_WITH_DOMAINS} where c.tenant_id = ? order by c.created_at, c.id`, [tenantId])) as ConnectionRow[];
  return rows.map(fromRow);
}

/** The tenant's connection of `id`, or undefined. */
export async function findConnection(em: EntityManager, tenantId: string, id: string): Promise<SsoConnectionWithDomains | undefined> {
  const rows = (await em.execute(`${SELECT_WITH_DOMAINS} where c.tenant_id = ? and c.id = ?`, [tenantId, id])) as ConnectionRow[];
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** The tenant's connection that routes `domain` (lower-case), or undefined. */
export async function findConnectionOfDomain(em: EntityManager, tenantId: string, domain: string): Promise<SsoConnectionWithDomains | undefined> {
  const rows = (await em.execute(
    `${SELECT_WITH_DOMAINS} where c.tenant_id = ? and c.id = (select connection_id from sso_connection_domain where tenant_id = ? and domain = ?)`,
    [tenantId, tenantId, domain],
  )) as ConnectionRow[];
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** Whether the tenant has at least one connection (the sign-in page then asks for SSO first). */
export async function hasConnections(em: EntityManager, tenantId: string): Promise<boolean> {
  const rows = (await em.execute('select 1 from sso_connection where tenant_id = ? limit 1', [tenantId])) as unknown[];
  return rows.length > 0;
}

/** The fields of a connection a change may set. */
export type ConnectionChanges = Partial<Pick<SsoConnection,
  'name' | 'organizationId' | 'defaultOrganizationRoles' | 'providerPerformsMfa' | 'samlIdpEntityId' | 'samlSsoUrl' | 'samlCertificates' | 'samlMetadataUrl'
  | 'signAuthnRequests' | 'oidcIssuer' | 'oidcClientId' | 'oidcClientSecretEnc'>> & { updatedAt: Date };

/** Updates the tenant's connection of `id`; false when there is none. */
export async function updateConnection(em: EntityManager, tenantId: string, id: string, changes: ConnectionChanges): Promise<boolean> {
  const updated = await em.nativeUpdate(SsoConnectionSchema, { id, tenantId }, changes);
  return updated > 0;
}

/** The encrypted secrets of the tenant's connections: OpenID client secrets and SAML SP private keys (key rotation). */
export async function findConnectionSecrets(em: EntityManager, tenantId: string): Promise<{ id: string; oidcClientSecretEnc: string | null; spPrivateKeyEnc: string | null }[]> {
  const rows = (await em.execute(
    'select id, oidc_client_secret_enc, sp_private_key_enc from sso_connection where tenant_id = ?',
    [tenantId],
  )) as { id: string; oidc_client_secret_enc: string | null; sp_private_key_enc: string | null }[];
  return rows.map((row) => ({ id: row.id, oidcClientSecretEnc: row.oidc_client_secret_enc, spPrivateKeyEnc: row.sp_private_key_enc }));
}

/**
 * Replaces a connection's client-secret (`which: client_secret`) or SP-key (`which: sp_key`)
 * ciphertext if it is still `expected`; false when it changed meanwhile.
 */
export async function replaceConnectionSecretCiphertext(
  em: EntityManager, tenantId: string, id: string, which: 'client_secret' | 'sp_key', fresh: string, expected: string,
): Promise<boolean> {
  const column = which === 'client_secret' ? 'oidc_client_secret_enc' : 'sp_private_key_enc';
  const rows = (await em.execute(
    `update sso_connection set ${column} = ? where id = ? and tenant_id = ? and ${column} = ? returning id`,
    [fresh, id, tenantId, expected],
  )) as unknown[];
  return rows.length > 0;
}

/** Deletes the tenant's connection of `id` (its domains, requests and assertion ids go with it); false when there is none. */
export async function deleteConnection(em: EntityManager, tenantId: string, id: string): Promise<boolean> {
  return (await em.nativeDelete(SsoConnectionSchema, { id, tenantId })) > 0;
}

/**
 * Replaces the domains of the tenant's connection `connectionId`. A domain of another connection
 * of the tenant raises the primary key's unique violation (the caller answers 409).
 */
export async function replaceConnectionDomains(tx: EntityManager, tenantId: string, connectionId: string, domains: readonly string[]): Promise<void> {
  await tx.nativeDelete(SsoConnectionDomainSchema, { tenantId, connectionId });
  if (domains.length > 0) await tx.insertMany(SsoConnectionDomainSchema, domains.map((domain) => ({ tenantId, domain, connectionId })));
}

/** The connection of the tenant that holds one of `domains` other than `exceptConnectionId`, with that domain. */
export async function findDomainOwner(
  em: EntityManager, tenantId: string, domains: readonly string[], exceptConnectionId: string | null,
): Promise<{ domain: string; connectionId: string } | undefined> {
  if (domains.length === 0) return undefined;
  const rows = (await em.execute(
    `select domain, connection_id from sso_connection_domain where tenant_id = ? and domain in (?)${exceptConnectionId === null ? '' : ' and connection_id <> ?'} limit 1`,
    exceptConnectionId === null ? [tenantId, domains] : [tenantId, domains, exceptConnectionId],
  )) as { domain: string; connection_id: string }[];
  return rows[0] ? { domain: rows[0].domain, connectionId: rows[0].connection_id } : undefined;
}
